import Foundation
import Testing

@testable import Imagery

/// The processors the process may use: cgroup files parsed from their text, the least limit counted.
@Suite("Usable processors")
struct UsableProcessorsTests {
    @Test(
        arguments: [
            ("max 100000", nil), ("150000 100000", 1.5), ("200000 100000\n", 2.0), ("50000 100000", 0.5),
            ("max", nil), ("", nil), ("garbage", nil), ("0 100000", nil), ("100000", 1.0),
        ] as [(String, Double?)])
    func readsTheCgroupV2Quota(text: String, processors: Double?) {
        #expect(UsableProcessors.cgroupV2Quota(cpuMax: text) == processors)
    }

    @Test(
        arguments: [
            ("-1", "100000", nil), ("150000\n", "100000\n", 1.5), ("400000", "100000", 4.0), ("", "100000", nil),
            ("100000", "0", nil),
        ] as [(String, String, Double?)])
    func readsTheCgroupV1Quota(quota: String, period: String, processors: Double?) {
        #expect(UsableProcessors.cgroupV1Quota(quota: quota, period: period) == processors)
    }

    @Test func aQuotaIsRoundedUpAndTheLeastLimitCounts() {
        #expect(UsableProcessors(affinity: 16, quota: 1.5, active: 64).count == 2)
        #expect(UsableProcessors(affinity: 1, quota: 4, active: 2).count == 1)  // taskset -c 0 on 2 cores
        #expect(UsableProcessors(affinity: nil, quota: nil, active: 8).count == 8)
        #expect(UsableProcessors(affinity: 0, quota: 0.1, active: 8).count == 1)  // at least one
        #expect(
            UsableProcessors(affinity: 2, quota: 1.5, active: 4).description
                == "2 (affinity 2, cgroup quota 1.5, 4 active)")
        #expect(
            UsableProcessors(affinity: nil, quota: nil, active: 4).description
                == "4 (affinity unknown, no cgroup quota, 4 active)")
    }

    @Test func findsTheCgroupPathsOfBothVersions() {
        let hybrid = """
            12:cpu,cpuacct:/docker/abc
            4:memory:/docker/abc
            0::/system.slice/imagery.service
            """
        let paths = UsableProcessors.cgroupPaths(hybrid)
        #expect(paths.v2 == "/system.slice/imagery.service")
        #expect(paths.v1?.controllers == "cpu,cpuacct" && paths.v1?.path == "/docker/abc")
        // cpuacct alone is not cpu; a v2-only system has no v1 line.
        let v2Only = UsableProcessors.cgroupPaths("3:cpuacct:/x\n0::/\n")
        #expect(v2Only.v2 == "/" && v2Only.v1 == nil)
    }

    /// A nested cgroup v2 path: the least quota of the process's cgroup and those above it.
    @Test func takesTheLeastQuotaOfANestedCgroupAndItsParents() {
        let files = [
            "/proc/self/cgroup": "0::/kubepods/pod1/container\n",
            "/sys/fs/cgroup/kubepods/pod1/container/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/kubepods/pod1/cpu.max": "250000 100000\n",
            "/sys/fs/cgroup/kubepods/cpu.max": "800000 100000\n",
        ]
        #expect(UsableProcessors.cgroupQuota(readingFile: { files[$0] }) == 2.5)
    }

    /// cgroup v1 without a namespace of its own: the host's path is shown, the container's cgroup is the mount's root.
    @Test func readsCgroupV1AtTheMountWhenThePathIsTheHosts() {
        let files = [
            "/proc/self/cgroup": "5:cpu,cpuacct:/docker/0123\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "200000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        ]
        #expect(UsableProcessors.cgroupQuota(readingFile: { files[$0] }) == 2)
        let unlimited = [
            "/proc/self/cgroup": "5:cpu:/\n", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
            "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
        ]
        #expect(UsableProcessors.cgroupQuota(readingFile: { unlimited[$0] }) == nil)
    }

    @Test func missingFilesSetNoLimit() {
        #expect(UsableProcessors.cgroupQuota(readingFile: { _ in nil }) == nil)
        let noCPUFiles = ["/proc/self/cgroup": "0::/user.slice\n"]
        #expect(UsableProcessors.cgroupQuota(readingFile: { noCPUFiles[$0] }) == nil)
    }

    /// On the machine the tests run on, whatever it is: at least one, at most the processors online.
    @Test func theRealCountIsBetweenOneAndTheActiveProcessors() {
        let processors = UsableProcessors.read()
        #expect(processors.count >= 1)
        #expect(processors.count <= ProcessInfo.processInfo.activeProcessorCount)
        #expect(processors.active == ProcessInfo.processInfo.activeProcessorCount)
        #if os(Linux)
            #expect(processors.affinity != nil)
        #endif
    }
}
