import NIOCore
import NIOPosix

/// The heads of recent hits' answers on one event loop: for one stored response
/// (``StoredHead/identity``) and one text's terms, an unconditional answer's head (a 200's) changes
/// at most once a second (`Date`, and the max-age and `Age`, count seconds), so ``StoredHits``
/// writes it once a second, not per hit. A thread's own (``current``): no lock.
final class HitHeads: @unchecked Sendable {
    // @unchecked: only the thread that made it uses it (``current``).
    private struct Kept {
        let second: Int
        let terms: ResponseTerms
        let negotiated: Bool
        let head: ByteBuffer
    }

    private var kept: [UInt64: Kept] = [:]
    /// Past this many, the next new one starts the table again (a few hundred bytes each).
    private static let limit = 4096

    private static let threads = ThreadSpecificVariable<HitHeads>()

    /// This thread's.
    static var current: HitHeads {
        if let heads = threads.currentValue { return heads }
        let heads = HitHeads()
        threads.currentValue = heads
        return heads
    }

    /// The head kept for the answer to `identity` with `terms` in `second`, if any.
    func head(of identity: UInt64, terms: ResponseTerms, negotiated: Bool, second: Int) -> ByteBuffer? {
        guard let entry = kept[identity], entry.second == second, entry.negotiated == negotiated, entry.terms == terms
        else { return nil }
        return entry.head
    }

    func keep(_ head: ByteBuffer, of identity: UInt64, terms: ResponseTerms, negotiated: Bool, second: Int) {
        if kept.count >= Self.limit, kept[identity] == nil { kept.removeAll(keepingCapacity: true) }
        kept[identity] = Kept(second: second, terms: terms, negotiated: negotiated, head: head)
    }
}
