# The cluster's parts for scripts/cluster and scripts/cluster-benchmark, sourced by them: an nginx origin
# serving IMAGES under /vN/NAME (every request logged), SeaweedFS's S3 gateway with one bucket, instances
# of `imagery serve`, the nginx balancer from `imagery cluster nginx-config`, and readers of their counters.
# Expects: $imagery (the binary), $images (a directory of JPEGs), $sources; sets $work (removed on exit
# unless KEEP is set).
work=$(mktemp -d /tmp/imagery-cluster.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    for conf in "$work"/origin.conf "$work"/balancer.conf; do
        [ -f "${conf%.conf}/nginx.pid" ] && kill "$(cat "${conf%.conf}/nginx.pid")" 2>/dev/null || true
    done
    sleep 0.5
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

origin_port=9300 balancer_port=9301 s3_port=9390
instance_ports=(9311 9312 9313 9314)
for port in $origin_port $balancer_port $s3_port 9391 9392 9393 "${instance_ports[@]}"; do
    if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
        echo "port $port is in use (a server left from an earlier run?): stop it first" >&2
        exit 1
    fi
done

# --- The origin: nginx serving the images under /vN/NAME, every request logged.
mkdir -p "$work/origin/files"
find "$images" -maxdepth 1 -name '*.jpg' -exec cp {} "$work/origin/files/" \;
(cd "$work/origin/files" && ls *.jpg) > "$work/names"
[ -s "$work/names" ] || { echo "no JPEGs in $images" >&2; exit 1; }
chmod -R a+rX "$work"
cat > "$work/origin.conf" <<EOF
worker_processes 1;
pid $work/origin/nginx.pid;
error_log $work/origin/error.log;
events { worker_connections 1024; }
http {
    types { image/jpeg jpg; }
    log_format path '\$request_uri';
    client_body_temp_path $work/origin/t; proxy_temp_path $work/origin/t;
    fastcgi_temp_path $work/origin/t; uwsgi_temp_path $work/origin/t; scgi_temp_path $work/origin/t;
    add_header Cache-Control "public, max-age=86400";
    server {
        listen 127.0.0.1:$origin_port; root $work/origin/files; access_log $work/origin/access.log path;
        location / { rewrite ^/v[0-9]+/(.*)\$ /\$1 break; }
    }
}
EOF
nginx -c "$work/origin.conf"
origin_fetches() { [ -f "$work/origin/access.log" ] && wc -l < "$work/origin/access.log" || echo 0; }

# The request paths: source i is /vI/NAME (NAME rotating through the images; I = i + $source_offset),
# at widths FIRST_WIDTH, FIRST_WIDTH + 1, ...
paths() {  # paths FIRST_WIDTH COUNT_OF_WIDTHS
    local names=() i j
    mapfile -t names < "$work/names"
    for ((j = 0; j < $2; j++)); do
        for ((i = 1; i <= sources; i++)); do
            local name=${names[$(( (i - 1) % ${#names[@]} ))]}
            local url="http%3A%2F%2F127.0.0.1%3A$origin_port%2Fv$(( i + ${source_offset:-0} ))%2F$name"
            echo "/image?url=$url&w=$(( $1 + j ))"
        done
    done
}

# The same sources in five spellings, rotating (source i at width w: spelling (i + w) % 5): /image's url
# plain and percent-encoded, thumbor's, imgproxy's plain and base64. Only the plain forms are read by
# nginx as the instances key a source; the others reach the owner through one forward.
mixed_paths() {  # mixed_paths FIRST_WIDTH COUNT_OF_WIDTHS [SPELLINGS: default "0 1 2 3 4"]
    local names=() i j spellings=(${3:-0 1 2 3 4})
    mapfile -t names < "$work/names"
    for ((j = 0; j < $2; j++)); do
        for ((i = 1; i <= sources; i++)); do
            local name=${names[$(( (i - 1) % ${#names[@]} ))]} width=$(( $1 + j ))
            local plain="http://127.0.0.1:$origin_port/v$(( i + ${source_offset:-0} ))/$name"
            case ${spellings[$(( (i + j) % ${#spellings[@]} ))]} in
                0) echo "/image?url=$plain&w=$width" ;;
                1) echo "/image?url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$plain")&w=$width" ;;
                2) echo "/unsafe/${width}x0/${plain#http://}" ;;
                3) echo "/insecure/w:$width/plain/$plain" ;;
                4) echo "/insecure/w:$width/$(printf %s "$plain" | base64 -w0 | tr '+/' '-_' | tr -d '=')" ;;
            esac
        done
    done
}
forwards_of() { metric "$1" 'imagery_cluster_forwards_total{outcome="forwarded"}'; }
ring_options() {  # ring_options INDEX...: the --cluster-instance list of those instances
    local list=() i
    for i in "$@"; do list+=("127.0.0.1:${instance_ports[$i]}"); done
    (IFS=,; echo "--cluster-instance ${list[*]}")
}

# --- SeaweedFS: master, volume, filer and the S3 gateway, one identity, one bucket.
export AWS_ACCESS_KEY_ID=imagery-cluster AWS_SECRET_ACCESS_KEY=imagery-cluster-secret
mkdir -p "$work/weed/data"
cat > "$work/weed/s3.json" <<EOF
{"identities":[{"name":"imagery","credentials":[{"accessKey":"$AWS_ACCESS_KEY_ID","secretKey":"$AWS_SECRET_ACCESS_KEY"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
EOF
start_weed() {
    weed server -s3 -dir="$work/weed/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port=9391 -volume.port=9392 \
        -filer.port=9393 -s3.port=$s3_port -s3.config="$work/weed/s3.json" -master.volumeSizeLimitMB=64 -volume.max=20 \
        -s3.port.iceberg=0 -s3.port.lance=0 \
        > "$work/weed/weed.log" 2>&1 &
    weed_pid=$!
    disown $weed_pid
    pids+=($weed_pid)
    for _ in $(seq 120); do (exec 3<>/dev/tcp/127.0.0.1/$s3_port) 2>/dev/null && break; sleep 0.5; done
    for _ in $(seq 60); do
        echo "s3.bucket.create -name imagery" | weed shell -master=127.0.0.1:9391 > "$work/weed/shell.log" 2>&1 || true
        # The gateway takes a few seconds more to serve signed writes after the bucket appears (the first
        # ones failed, and the instances' tiers paused): let it settle.
        echo "s3.bucket.list" | weed shell -master=127.0.0.1:9391 2>/dev/null | grep -q imagery && { sleep 5; return 0; }
        sleep 1
    done
    echo "SeaweedFS did not start: $(tail -5 "$work/weed/weed.log")" >&2
    exit 1
}
start_weed

# --- Instances: each with its own disk cache, the shared tier, JSON logs.
declare -A instance_pid
start_instance() {  # start_instance INDEX [--no-shared] [MORE SERVE OPTIONS...]; cache in $work/cache-INDEX-TAG$round,
    # shared objects under round$round/ when $round is set
    local index=$1; shift
    local port=${instance_ports[$index]} shared=(--s3-endpoint "http://127.0.0.1:$s3_port" --s3-bucket imagery) tag=shared
    if [ "${1:-}" = --no-shared ]; then shared=(); tag=no-shared; shift; fi
    [ -n "${round:-}" ] && [ -n "${shared[*]}" ] && shared+=(--s3-prefix "round${round}/")  # each round its own shared objects
    IMAGERY_LOG_FORMAT=json "$imagery" serve --port "$port" --cache-dir "$work/cache-$index-$tag${round:-}" \
        --allow-private-host 127.0.0.1 "${shared[@]}" "$@" > "$work/instance-$index.log" 2>&1 &
    instance_pid[$index]=$!
    pids+=($!)
    disown $!  # killed on purpose later: no "Killed" line from the shell
    for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/health" && return 0; sleep 0.1; done
    echo "instance $index did not start: $(tail -3 "$work/instance-$index.log")" >&2
    exit 1
}
stop_instance() {  # SIGKILL, then wait until it is gone (its port free)
    kill -9 "${instance_pid[$1]}" 2>/dev/null || true
    while kill -0 "${instance_pid[$1]}" 2>/dev/null; do sleep 0.05; done
}
metric() {  # metric INDEX 'NAME{LABELS}': the value, 0 if absent
    curl -fs "http://127.0.0.1:${instance_ports[$1]}/metrics" | awk -v name="$2" '$1 == name { print $2; found = 1 } END { if (!found) print 0 }'
}
requests_of() { metric "$1" 'imagery_requests_total{route="/image",status="200"}'; }
decodes_of() { metric "$1" 'imagery_decode_duration_seconds_count{result="ok"}'; }
shared_hits_of() { metric "$1" 'imagery_cache_lookups_total{tier="shared",result="hit"}'; }
wait_for_shared_writes() {  # wait_for_shared_writes COUNT INDEX...: until those instances have stored COUNT objects in S3
    local want=$1 stored=0; shift  # (their writes run in the background; a debug build's can lag by seconds)
    for _ in $(seq 240); do
        stored=$(for i in "$@"; do metric "$i" 'imagery_shared_store_requests_total{operation="put",outcome="stored"}'; done | awk '{ s += $1 } END { print s + 0 }')
        [ "$stored" -ge "$want" ] && return 0
        sleep 0.25
    done
    echo "  (only $stored of $want objects reached the shared tier in 60 s)"
}

# --- The balancer.
balance() {  # balance MODE INDEX...: (re)configure nginx over those instances
    local mode=$1 list=(); shift
    for i in "$@"; do list+=(--instance "127.0.0.1:${instance_ports[$i]}"); done
    mkdir -p "$work/balancer"
    "$imagery" cluster nginx-config "${list[@]}" --listen "127.0.0.1:$balancer_port" --balance "$mode" \
        --standalone "$work/balancer" > "$work/balancer.conf"
    if [ -f "$work/balancer/nginx.pid" ] && kill -0 "$(cat "$work/balancer/nginx.pid")" 2>/dev/null; then
        nginx -c "$work/balancer.conf" -s reload
        sleep 1  # the old workers finish, the new ones take the listening socket
    else
        nginx -c "$work/balancer.conf"
    fi
}
drive() { python3 scripts/cluster-support/drive.py "http://127.0.0.1:$balancer_port" --concurrency "${1:-8}"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, d))" "$1"; }

