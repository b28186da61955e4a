// imagery-fuzz TARGET [libFuzzer options] [corpus directories or files]
//
// Built by scripts/fuzz with coverage instrumentation and -DIMAGERY_FUZZING, this is libFuzzer
// driving one of the targets (``FuzzTarget``). Built plainly (as `swift build` does), it replays
// the files and directories given through the target once each, and exits 1 on the first failure.
import Foundation
import ImageryFuzzTargets

var arguments = CommandLine.arguments
guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: imagery-fuzz TARGET [options] [corpus...]; targets: \(names)\n".utf8))
    exit(2)
}
let selected = target

/// A failed property is a crash to libFuzzer: it saves the input and stops.
func runOne(_ bytes: [UInt8]) {
    do {
        try selected.run(bytes)
    } catch {
        FileHandle.standardError.write(Data("\(selected.rawValue): \(error.description)\n".utf8))
        abort()
    }
}

#if IMAGERY_FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    // libFuzzer sees the program's name and the arguments after the target's name.
    var libFuzzerArguments: [UnsafeMutablePointer<CChar>?] =
        ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
    var argc = Int32(libFuzzerArguments.count - 1)
    exit(
        libFuzzerArguments.withUnsafeMutableBufferPointer { buffer in
            var argv = buffer.baseAddress!
            return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                runOne(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
                return 0
            }
        })
#else
    var files: [URL] = []
    for path in arguments.dropFirst(2) where !path.hasPrefix("-") {
        let url = URL(fileURLWithPath: path)
        if let names = try? FileManager.default.contentsOfDirectory(atPath: path) {
            files += names.sorted().map { url.appendingPathComponent($0) }
        } else {
            files.append(url)
        }
    }
    for file in files {
        guard let data = FileManager.default.contents(atPath: file.path) else { continue }
        runOne(Array(data))
    }
    print("\(selected.rawValue): \(files.count) inputs replayed")
#endif
