import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// The defaults that follow the machine: their rules, the files they read, and this machine's.
@Suite("Machine defaults")
struct MachineDefaultsTests {
    static let mebibyte = 1 << 20
    static let gibibyte = 1 << 30

    @Test func aSmallMachineKeepsTheMeasuredDefaults() {
        for processors in 1...4 {
            let defaults = MachineDefaults(processors: processors, memory: 24 * Self.gibibyte)
            #expect(defaults.memoryLimit == 512 * Self.mebibyte)
            #expect(defaults.admissionQueueLength == (processors <= 2 ? 64 : 32 * processors))
            #expect(defaults.maximumConcurrentFetches == max(16, 8 * processors))
        }
    }

    @Test func moreProcessorsHoldMoreAtOnce() {
        let defaults = MachineDefaults(processors: 16, memory: 128 * Self.gibibyte)
        #expect(defaults.memoryLimit == 2 * Self.gibibyte)
        #expect(defaults.admissionQueueLength == 512)
        #expect(defaults.maximumConcurrentFetches == 128)
    }

    @Test func theMemoryLimitStaysWithinHalfOfWhatTheProcessMayUse() {
        #expect(MachineDefaults(processors: 2, memory: 512 * Self.mebibyte).memoryLimit == 256 * Self.mebibyte)
        #expect(MachineDefaults(processors: 16, memory: 1224 * Self.mebibyte).memoryLimit == 612 * Self.mebibyte)
        // a floor
        #expect(MachineDefaults(processors: 2, memory: 64 * Self.mebibyte).memoryLimit == 64 * Self.mebibyte)
        #expect(MachineDefaults(processors: 8, memory: nil).memoryLimit == Self.gibibyte)
        #expect(MachineDefaults(processors: 0, memory: nil).processors == 1)
    }

    @Test func readsTheLeastOfTheMachinesMemoryAndEveryCgroupLimitAboveTheProcess() {
        let files = [
            "/proc/meminfo": "MemTotal:       24576000 kB\nMemFree:        20000000 kB\n",
            "/proc/self/cgroup": "0::/system.slice/imagery.service\n",
            "/sys/fs/cgroup/system.slice/imagery.service/memory.max": "1283457024\n",
            "/sys/fs/cgroup/system.slice/memory.max": "max\n",
        ]
        #expect(MachineDefaults.usableMemory(readingFile: { files[$0] }) == 1_283_457_024)
        // A limit on a parent counts too; no cgroup file: the machine's memory.
        let parent = files.merging(["/sys/fs/cgroup/system.slice/memory.max": "1073741824"]) { $1 }
        #expect(MachineDefaults.usableMemory(readingFile: { parent[$0] }) == Self.gibibyte)
        #expect(
            MachineDefaults.usableMemory(readingFile: { $0 == "/proc/meminfo" ? files[$0] : nil }) == 24_576_000 * 1024)
        #expect(MachineDefaults.usableMemory(readingFile: { _ in nil }) == nil)
    }

    @Test func cgroupV1LimitsAndTheirNoLimitValue() {
        let files = [
            "/proc/self/cgroup": "12:cpu,cpuacct:/docker/abc\n7:memory:/docker/abc\n0::/\n",
            "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "536870912\n",
        ]
        #expect(MachineDefaults.usableMemory(readingFile: { files[$0] }) == 512 * Self.mebibyte)
        #expect(MachineDefaults.cgroupLimit("9223372036854771712") == nil)  // v1's "unlimited"
        #expect(MachineDefaults.cgroupLimit("max") == nil)
        #expect(MachineDefaults.memTotal("MemFree: 1 kB\n") == nil)
    }

    @Test func thisMachinesDefaultsAreWithinTheRules() {
        let current = MachineDefaults.current
        #expect(current.processors >= 1 && current.processors <= ProcessInfo.processInfo.activeProcessorCount)
        #expect(current.memory.map { $0 > 0 } ?? true)
        #expect(ServerConfiguration().limits.memoryLimit == current.memoryLimit)
    }
}
