/// The conditional fields of a request.
struct Validators: Sendable {
    var ifNoneMatch: String?
    var ifModifiedSince: String?
}
