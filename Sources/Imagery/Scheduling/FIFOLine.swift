/// A first-in-first-out line over an array and the index of its head: appending and taking the
/// first are O(1) (amortised), and the array is compacted as its head advances. The scheduling
/// types keep their waiting work in it (``DownloadQueueStateMachine``, ``WorkerPool``,
/// ``ImagePrefetcher``), removing entries from the middle lazily.
struct FIFOLine<Element> {
    private var elements: [Element] = []
    /// The place of the first element; places before it are spent.
    private(set) var head = 0

    /// Elements in the line.
    var count: Int { elements.count - head }
    var isEmpty: Bool { head == elements.count }
    /// The places of the elements in the line, first to last.
    var indices: Range<Int> { head..<elements.count }
    /// The elements in the line, first to last.
    var live: ArraySlice<Element> { elements[head...] }

    subscript(place: Int) -> Element {
        get { elements[place] }
        set { elements[place] = newValue }
    }

    mutating func append(_ element: Element) { elements.append(element) }

    /// Takes the first element.
    mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        defer {
            head += 1
            compact()
        }
        return elements[head]
    }

    /// Drops the first elements while `isSpent` says so (entries removed in place).
    mutating func dropFirst(while isSpent: (Element) -> Bool) {
        while head < elements.count, isSpent(elements[head]) { head += 1 }
        compact()
    }

    /// Keeps only the elements `isKept` says, in order.
    mutating func keep(where isKept: (Element) -> Bool) {
        elements = elements[head...].filter(isKept)
        head = 0
    }

    /// Gives back the spent places once the line is empty, or once they are most of the array.
    private mutating func compact() {
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > elements.count {
            elements.removeFirst(head)
            head = 0
        }
    }
}
