import Foundation

/// A real small filesystem for fault tests, mounted on a temporary directory (root only:
/// `mount(8)`): a tmpfs of a few megabytes, which a test can fill and remount read-only and back
/// (when nothing has a file open for writing there); or an ext4 image on a loop device, which a
/// test can break into read-only as the kernel does on an I/O error (`errors=remount-ro`, whatever
/// is open), and repair (unmount, `e2fsck`, mount again).
public struct SmallFilesystem: Sendable {
    public enum Kind: Sendable {
        case tmpfs
        case ext4
    }

    public let mountPoint: URL
    public let kind: Kind
    private let image: URL?

    /// Whether this process can mount one: root, with `mount` on the path, and a 1 MB tmpfs mounted and
    /// unmounted once to prove it (a container may run as root without the right to mount). Tests that
    /// need one are skipped otherwise; CI runs as root and may mount.
    public static let isAvailable: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: mountCommand) else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imagery-fs-probe-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else {
            return false
        }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard run(mountCommand, ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]) == 0 else { return false }
        return run(umountCommand, [probe.path]) == 0
    }()

    /// Whether ext4 images can be made and mounted too (`mkfs.ext4`, loop devices).
    public static let canMakeExt4: Bool =
        isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.ext4")
        && FileManager.default.fileExists(atPath: "/dev/loop-control")

    /// Runs `body` with a fresh tmpfs of `megabytes`, unmounted afterwards.
    public static func with(megabytes: Int, _ kind: Kind = .tmpfs, _ body: (SmallFilesystem) async throws -> Void)
        async throws
    {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-fs-\(UUID().uuidString)")
        let mountPoint = base.appendingPathComponent("mnt")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        var image: URL?
        switch kind {
        case .tmpfs:
            guard run(mountCommand, ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path]) == 0 else {
                throw SmallFilesystemError(message: "cannot mount a tmpfs on \(mountPoint.path)")
            }
        case .ext4:
            let file = base.appendingPathComponent("fs.img")
            image = file
            guard FileManager.default.createFile(atPath: file.path, contents: nil),
                truncate(file.path, off_t(megabytes << 20)) == 0,
                run("/usr/sbin/mkfs.ext4", ["-q", "-F", file.path]) == 0
            else { throw SmallFilesystemError(message: "cannot make an ext4 image at \(file.path)") }
            let filesystem = SmallFilesystem(mountPoint: mountPoint, kind: kind, image: file)
            try filesystem.mount()
        }
        let filesystem = SmallFilesystem(mountPoint: mountPoint, kind: kind, image: image)
        defer { _ = run(umountCommand, ["-l", mountPoint.path]) }
        try await body(filesystem)
    }

    private func mount() throws {
        guard let image else { return }
        guard Self.run(Self.mountCommand, ["-o", "loop,errors=remount-ro", image.path, mountPoint.path]) == 0 else {
            throw SmallFilesystemError(message: "cannot mount \(image.path) on \(mountPoint.path)")
        }
    }

    /// ext4: an error as the kernel meets on a failing disk (`trigger_fs_error`): the filesystem
    /// turns read-only at once, open files included, until it is unmounted and repaired.
    public func breakIntoReadOnly() throws {
        let device = Self.output("/usr/bin/findmnt", ["-no", "SOURCE", mountPoint.path]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let trigger = "/sys/fs/ext4/\((device as NSString).lastPathComponent)/trigger_fs_error"
        guard !device.isEmpty, let handle = FileHandle(forWritingAtPath: trigger)
        else { throw SmallFilesystemError(message: "cannot trigger an error on \(mountPoint.path) (\(trigger))") }
        handle.write(Data("imagery test\n".utf8))
        try? handle.close()
    }

    /// ext4: what an operator does after an error: unmount (lazily: what is still open keeps the
    /// old mount), `e2fsck -fy`, mount again on the same path.
    public func repair() throws {
        guard let image else { return }
        _ = Self.run(Self.umountCommand, ["-l", mountPoint.path])
        _ = Self.run("/usr/sbin/e2fsck", ["-fy", image.path])
        try mount()
    }

    /// Remounts it read-only (`true`) or read-write; waits for files open for writing there to close
    /// (a cache just released closes its files on another thread), up to the hang guard.
    public func setReadOnly(_ readOnly: Bool) throws {
        let deadline = Date().addingTimeInterval(Double(hangGuard.components.seconds))
        while Self.run(Self.mountCommand, ["-o", "remount,\(readOnly ? "ro" : "rw")", mountPoint.path]) != 0 {
            guard Date() < deadline else { throw SmallFilesystemError(message: "cannot remount \(mountPoint.path)") }
            usleep(20_000)
        }
    }

    /// Fills it with a file of zeros until no byte is left (`fill` in the mount point).
    public func fill() {
        let path = mountPoint.appendingPathComponent("fill").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_APPEND, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        var size = chunk.count
        while size > 0 {
            if chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress!, size) }) < 0 { size /= 2 }
        }
    }

    /// Removes what ``fill()`` wrote.
    public func unfill() {
        unlink(mountPoint.appendingPathComponent("fill").path)
    }

    /// Bytes free now.
    public var availableBytes: Int {
        var info = statvfs()
        guard statvfs(mountPoint.path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    private static var mountCommand: String {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/mount") ? "/usr/bin/mount" : "/bin/mount"
    }
    private static var umountCommand: String {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/umount") ? "/usr/bin/umount" : "/bin/umount"
    }

    private static func output(_ command: String, _ arguments: [String]) -> String {
        guard let (_, output) = try? ChildProcess.run(command, arguments) else { return "" }
        return String(decoding: output, as: UTF8.self)
    }

    private static func run(_ command: String, _ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(command, arguments) else { return -1 }
        return child.wait().status
    }
}

public struct SmallFilesystemError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
