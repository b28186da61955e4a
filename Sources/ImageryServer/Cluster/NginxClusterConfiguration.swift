import Foundation

/// nginx in front of several `imagery serve` instances (`imagery cluster nginx-config`).
///
/// Requests are sharded by their **source**, not by their whole URL: every size and format of one
/// source goes to one instance, so its coalescing, its kept original and its decoded bases work for
/// the whole cluster, and one source costs one origin fetch cluster-wide. nginx's `hash ... consistent`
/// (ketama) moves only the sources of an instance that leaves or joins. The source is read from the
/// request by a `map` of regular expressions, one per URL syntax the proxy answers (``sourcePatterns``);
/// a request none matches is hashed on its whole URI (still correct, only not sharded by source).
///
/// Instances that fail are passed over: a connection error or timeout sends the request to the next
/// instance on the ring (`proxy_next_upstream`), and the failed one is not tried for `failTimeout`
/// (passive health checks: nginx's open-source build has no active ones).
public struct NginxClusterConfiguration: Sendable {
    public enum Balance: String, Sendable, CaseIterable {
        /// `hash $imagery_source consistent`: by source (the default).
        case consistent
        /// nginx's default round robin: the control in benchmarks; every instance fetches every source.
        case roundRobin = "round-robin"
    }

    /// `HOST:PORT` of each instance.
    public var instances: [String]
    /// What nginx listens on: `8080`, `0.0.0.0:80`, `127.0.0.1:9000`.
    public var listen: String
    public var balance: Balance = .consistent
    /// Failures (errors, timeouts) before an instance is passed over for ``failTimeout``; default 1.
    public var maximumFails = 1
    /// Seconds a failed instance is passed over; default 10.
    public var failTimeout = 10
    /// Idle keep-alive connections nginx holds to each instance; default 32.
    public var keepalive = 32

    public init(instances: [String], listen: String) {
        self.instances = instances
        self.listen = listen
    }

    /// The source of each URL syntax, as a PCRE for nginx's `map` on `$request_uri`, with the nginx
    /// value it maps to (a named capture, or `$arg_url`; capture names are letters only, which both
    /// PCRE and ICU take, so the tests can check the patterns with `NSRegularExpression`). Checked in order; the first match wins.
    /// - `/image?...url=...`, `/info?...`: the `url` parameter.
    /// - imgproxy, plain: `/SIGNATURE/OPTION:ARGS/.../plain/SOURCE[@EXTENSION]`.
    /// - thumbor: `/(unsafe|HMAC)/[meta/][trim.../][LxT:RxB/][fit-in/][WxH/][halign/][valign/][smart/][filters:.../]IMAGE`,
    ///   thumbor's own order (as `ThumborURL` reads it).
    /// - imgproxy, encoded: `/SIGNATURE/OPTION:ARGS/.../BASE64URL[.EXTENSION]`.
    /// thumbor's path up to its IMAGE, in thumbor's order.
    private static let thumborOptions =
        #"^/(?:unsafe|[A-Za-z0-9_=-]{27,28})/(?:meta/)?(?:trim(?::[^/]*)?/)?(?:-?\d+x-?\d+:-?\d+x-?\d+/)?"#
        + #"(?:(?:adaptive-)?(?:full-)?fit-in/)?(?:-?(?:\d+|orig)?x-?(?:\d+|orig)?/)?(?:(?:left|center|right)/)?"#
        + #"(?:(?:top|middle|bottom)/)?(?:smart/)?(?:filters:[^/]*/)?"#

    public static let sourcePatterns: [(name: String, pattern: String, value: String)] = [
        ("native", #"^/(?:image|info)\?"#, "$arg_url"),
        ("imgproxy-plain", #"^/[^/?]+/(?:[^/?]*:[^/?]*/)*plain/(?<imageryplain>[^@?]+)"#, "$imageryplain"),
        (
            "thumbor, an IMAGE with its scheme",
            thumborOptions + #"(?<imagerythumborurl>[A-Za-z][A-Za-z0-9+.-]*(?::|%3[Aa])(?://|%2[Ff]%2[Ff])[^?]*)"#,
            "$imagerythumborurl"
        ),
        // As the instances key it (`ThumborURL`): an IMAGE without a scheme is fetched over http.
        ("thumbor", thumborOptions + #"(?<imagerythumbor>[^?]*\.[^?]*)"#, "http://$imagerythumbor"),
        ("imgproxy-encoded", #"^/[^/?]+/(?:[^/?]*:[^/?]*/)+(?<imageryencoded>[A-Za-z0-9_=/-]+)"#, "$imageryencoded"),
    ]

    /// The `upstream`, `map` and `server` blocks: a file for `/etc/nginx/conf.d/`.
    public func renderServerBlocks() -> String {
        var text = """
            # imagery serve x \(instances.count), sharded by source (imagery cluster nginx-config).
            # Each instance is told the ring, so that it sends a source spelled otherwise (percent-encoded,
            # base64) to the instance that owns it:
            #   imagery serve --cluster-instance \(instances.joined(separator: ",")) --cluster-self ITS_HOST:PORT
            # The source of a request, by URL syntax: /image and /info's url, thumbor's IMAGE, imgproxy's SOURCE.
            map $request_uri $imagery_source {
                default $request_uri;

            """
        for (name, pattern, value) in Self.sourcePatterns {
            text += "    # \(name)\n    \"~\(pattern)\" \(value);\n"
        }
        text += "}\n\nupstream imagery {\n"
        if balance == .consistent { text += "    hash $imagery_source consistent;\n" }
        for instance in instances {
            text += "    server \(instance) max_fails=\(maximumFails) fail_timeout=\(failTimeout)s;\n"
        }
        text += """
                keepalive \(keepalive);
            }

            server {
                listen \(listen) reuseport;
                location / {
                    proxy_pass http://imagery;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $host;
                    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                    # Set by an instance that sends a request to the source's owner; never by a client.
                    proxy_set_header X-Imagery-Forwarded "";
                    # An instance that is down or does not answer: the next one on the ring (a GET is safe
                    # to send again; nothing has reached the client yet).
                    proxy_next_upstream error timeout;
                    proxy_next_upstream_tries 2;
                    proxy_connect_timeout 1s;
                    proxy_read_timeout 60s;
                    # Images are streamed as the instance sends them; its headers (Cache-Control, ETag,
                    # Vary) pass through unchanged for a CDN in front.
                    proxy_buffering off;
                }
            }

            """
        return text
    }

    /// A whole `nginx.conf` for `nginx -c FILE -p DIRECTORY`: the blocks of ``renderServerBlocks()`` in
    /// an `http` block, with the pid, logs and temporary files under `directory` (which must exist).
    public func renderStandalone(directory: String, workerProcesses: Int = 1, accessLog: Bool = false) -> String {
        let blocks = renderServerBlocks().split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.isEmpty ? "" : "    " + $0
        }
        return """
            worker_processes \(workerProcesses);
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 4096; }
            http {
                access_log \(accessLog ? "\(directory)/access.log" : "off");
                client_body_temp_path \(directory)/client-body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
            \(blocks.joined(separator: "\n"))
            }

            """
    }
}
