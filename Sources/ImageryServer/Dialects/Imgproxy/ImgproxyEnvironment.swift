import Foundation
import Imagery

/// imgproxy's configuration variables (`IMGPROXY_*`, as docker-compose files and Helm values set
/// them), read with imgproxy's names, syntax and meaning into the one ``ServerConfiguration``:
/// nothing after this knows which peer a setting came from. A variable imgproxy has that changes
/// nothing here is accepted and named at start; one this server cannot honour is reported.
package enum ImgproxyEnvironment {
    /// What reading the environment found beyond the settings it applied.
    package struct Report: Sendable, Equatable {
        /// `IMGPROXY_*` variables that are imgproxy's but not honoured here (their setting is not applied).
        package var unsupported: [String] = []
        /// `IMGPROXY_*` variables that imgproxy does not have.
        package var unknown: [String] = []
    }

    /// Reads every `IMGPROXY_*` variable of `environment` into `configuration` (an empty value is
    /// unset, as imgproxy reads it).
    /// - Throws: ``ConfigurationFileError`` naming the variable whose value is not valid.
    package static func apply(_ environment: [String: String], to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError) -> Report
    {
        var report = Report()
        // In name order, but the general quality before the per-format ones it stands behind.
        let ordered = environment.sorted {
            ($0.key == "IMGPROXY_QUALITY" ? "" : $0.key) < ($1.key == "IMGPROXY_QUALITY" ? "" : $1.key)
        }
        for (name, raw) in ordered where name.hasPrefix("IMGPROXY_") {
            let value = raw.trimmingCharacters(in: .whitespaces)
            if let read = variables[name]?.read {
                guard !value.isEmpty else { continue }
                do {
                    try read(value, &configuration, environment)
                } catch {
                    let reason = (error as? ConfigurationFileError)?.message ?? "\(error)"
                    throw ConfigurationFileError(message: "\(name)=\(raw) is not valid: \(reason)")
                }
            } else if ignored.contains(name) {
                continue
            } else if let behaviour = fixed[name] {
                // Honoured when it asks for what this server does; another value is not supported.
                guard (try? boolean(value)) == behaviour || value.isEmpty else {
                    report.unsupported.append(name)
                    continue
                }
            } else if imgproxyNames.contains(name) {
                report.unsupported.append(name)
            } else {
                report.unknown.append(name)
            }
        }
        if environment["IMGPROXY_SALT"] != nil || environment["IMGPROXY_KEY"] != nil,
            configuration.imgproxy.keys.count != configuration.imgproxy.salts.count
        {
            throw ConfigurationFileError(message: "IMGPROXY_KEY and IMGPROXY_SALT must list as many hex keys as salts")
        }
        return report
    }

    /// The name imgproxy's watermark image has among the server's watermarks (``ServerConfiguration/Rendering/watermarkFiles``).
    package static let watermarkName = "imgproxy"

    /// Presets as `NAME=OPTIONS` entries (blank ones and `#` comments skipped).
    static func addPresets(_ entries: [String], to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        for entry in entries.map({ $0.trimmingCharacters(in: .whitespaces) })
        where !entry.isEmpty && !entry.hasPrefix("#") {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationFileError(
                    message: "a preset is NAME=OPTIONS (thumb=rs:fill:300:300/q:80), not \(entry)")
            }
            configuration.imgproxy.presets[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[1])
                .trimmingCharacters(in: .whitespaces)
        }
    }

    /// `ENFORCE_*`: `format` replaces the URL's when `Accept` takes it (in imgproxy's order: JPEG XL, AVIF, WebP).
    static func enforce(_ format: ImageFormat, _ value: String, _ configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        configuration.imgproxy.enforcedFormats.removeAll { $0 == format }
        guard try boolean(value) else { return }
        configuration.imgproxy.enforcedFormats.append(format)
        configuration.imgproxy.enforcedFormats.sort {
            [ImageFormat.jxl, .avif, .webp].firstIndex(of: $0)! < [ImageFormat.jxl, .avif, .webp].firstIndex(of: $1)!
        }
    }

    /// An http(s) URL of an image downloaded at start (``ServerConfiguration/downloadingRemoteImages()``).
    static func remoteImage(_ value: String) throws(ConfigurationFileError) -> URL {
        guard let url = URL(string: value), ServerConfiguration.isRemote(url), url.host != nil else {
            throw ConfigurationFileError(message: "expected an http or https URL")
        }
        return url
    }

    /// imgproxy's format names (`jpeg,png,gif`).
    static func formats(_ value: String) throws(ConfigurationFileError) -> [ImageFormat] {
        try ImgproxyOptions.formats(named: list(value))
    }

    /// `AUTO_JXL`, `AUTO_AVIF`, `AUTO_WEBP`: the formats `Accept` may choose, in imgproxy's order.
    static func autoFormats(_ environment: [String: String], _ configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        var formats: [ImageFormat] = []
        for (name, format) in [("JXL", ImageFormat.jxl), ("AVIF", .avif), ("WEBP", .webp)] {
            let value = environment["IMGPROXY_AUTO_" + name]?.trimmingCharacters(in: .whitespaces) ?? ""
            if !value.isEmpty, try boolean(value) { formats.append(format) }
        }
        configuration.imgproxy.autoFormats = formats
        configuration.imgproxy.autoFormat = !formats.isEmpty
    }

    /// `FORMAT=QUALITY` pairs (`webp=79,avif=63`).
    static func formatQualities(_ value: String) throws(ConfigurationFileError) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for entry in list(value) {
            let parts = entry.split(separator: "=")
            guard parts.count == 2,
                let format = ImageFormat(fileExtension: String(parts[0]).trimmingCharacters(in: .whitespaces))
            else {
                throw ConfigurationFileError(
                    message: "format qualities are FORMAT=QUALITY pairs (webp=79,avif=63), not \(entry)")
            }
            qualities[format] = try integer(String(parts[1]).trimmingCharacters(in: .whitespaces), in: 1...100)
        }
        return qualities
    }

    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Go's `strconv.ParseBool`.
    static func boolean(_ value: String) throws(ConfigurationFileError) -> Bool {
        switch value {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw ConfigurationFileError(message: "expected true or false")
        }
    }

    static func integer(_ value: String, in range: ClosedRange<Int>) throws(ConfigurationFileError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ConfigurationFileError(
                message:
                    "expected a whole number from \(range.lowerBound)\(range.upperBound == .max ? " up" : " to \(range.upperBound)")"
            )
        }
        return number
    }

    /// An RFC 3339 time (`2025-01-31T12:00:00Z`, with a fraction or an offset), as imgproxy reads times.
    static func time(_ value: String) throws(ConfigurationFileError) -> Date {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: value) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        guard let date = formatter.date(from: value) else {
            throw ConfigurationFileError(message: "expected an RFC 3339 time (2025-01-31T12:00:00Z)")
        }
        return date
    }

    /// Megapixels (a decimal number) as pixels, as imgproxy reads resolutions.
    static func megapixels(_ value: String) throws(ConfigurationFileError) -> Int {
        guard let number = Double(value), number >= 0, number < 1e12 else {
            throw ConfigurationFileError(message: "expected megapixels (50, 10.5)")
        }
        return Int(number * 1_000_000)
    }
}
