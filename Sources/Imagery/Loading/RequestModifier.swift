import Foundation

/// Changes a ``DataRequest`` just before it is sent: a bearer token read at send time, a signature
/// made for this moment. It runs for every attempt (a retry sends a fresh token), after the
/// pipeline has added its conditional headers, and it is not part of any cache key: a token
/// refreshed between two requests neither splits the cache nor stops two requests sharing a download.
///
/// A request whose download is shared with others is sent once, with the modifiers of the request
/// that started it.
///
/// ```swift
/// configuration.requestModifier = .headers { ["Authorization": "Bearer \(try await tokens.current())"] }
/// ```
public struct RequestModifier: Sendable {
    private let modify: @Sendable (DataRequest) async throws -> DataRequest

    /// A modifier that returns the request to send in place of the one it is given.
    /// Throwing fails the load with that error.
    public init(_ modify: @escaping @Sendable (DataRequest) async throws -> DataRequest) {
        self.modify = modify
    }

    /// A modifier that adds (or replaces) the headers `headers` returns.
    public static func headers(_ headers: @escaping @Sendable () async throws -> [String: String]) -> RequestModifier {
        RequestModifier { request in
            var request = request
            for (name, value) in try await headers() {
                if let existing = request.headers.keys.first(where: { $0.lowercased() == name.lowercased() }) {
                    request.headers[existing] = nil
                }
                request.headers[name] = value
            }
            return request
        }
    }

    /// The request to send for `request`.
    public func callAsFunction(_ request: DataRequest) async throws -> DataRequest {
        try await modify(request)
    }
}
