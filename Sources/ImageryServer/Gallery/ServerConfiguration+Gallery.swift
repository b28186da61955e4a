import Foundation
import Imagery

extension ServerConfiguration {
    /// The gallery page at `/`.
    public struct Gallery: Sendable {
        /// The images of this directory are shown on the gallery page at `/` and served at
        /// `/files/NAME` (everything with an image extension in it is public); default `nil`.
        public var directory: URL?

        /// Image URLs shown on the gallery page, before the directory's files; default none.
        public var urls: [URL] = []

        public init() {}
    }
}

extension ServerConfiguration.Gallery: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        if let directory = directory {
            try require(
                ServerConfiguration.isDirectory(directory), "gallery.directory", "\(directory.path) is not a directory")
        }
    }
}
