import Foundation
import Testing

@testable import Imagery

@Suite("MemoryBudgetStateMachine")
struct MemoryBudgetStateMachineTests {
    typealias Machine = MemoryBudgetStateMachine

    @Test func admitsWhatFitsAndQueuesTheRestFirstInFirstOut() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 60, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 50, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 10, stage: .decode) == .enqueued)  // fits, but never overtakes 2
        #expect(machine.used == 60 && machine.queued == 2)
        #expect(machine.release(60, reserved: 60, stage: .decode).map(\.id) == [2, 3])
        #expect(machine.used == 60 && machine.activeDecodes == 2 && machine.queued == 0)
    }

    /// Resident memory over its ceiling: one decode at a time and no new download while anything
    /// is held, whatever the bytes say; clearing it admits the line as the bytes allow.
    @Test func underPressureOneDecodeAtATimeAndNoNewDownloads() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.setPressure(true).isEmpty)
        #expect(machine.reserve(id: 1, bytes: 10, stage: .decode) == .admitted, "the line always moves")
        #expect(
            machine.reserve(id: 2, bytes: 10, stage: .decode) == .enqueued, "a second slot is free and the bytes fit")
        #expect(machine.reserve(id: 3, bytes: 10, stage: .source) == .enqueued)
        #expect(machine.release(10, reserved: 10, stage: .decode).map(\.id) == [2], "one decode follows another")
        #expect(machine.setPressure(false).map(\.id) == [3])
        #expect(machine.reserve(id: 4, bytes: 10, stage: .decode) == .admitted)
        #expect(machine.activeDecodes == 2 && machine.activeSources == 1)
    }

    @Test func refusesWhatCanNeverFitAndWhatFindsTheLineFull() {
        var machine = Machine(limit: 100, maximumQueueLength: 1)
        #expect(machine.reserve(id: 1, bytes: 101, stage: .source) == .refusedTooLarge)
        #expect(machine.reserve(id: 2, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 4, bytes: 1, stage: .source) == .refusedQueueFull)
    }

    @Test func decodesGoBeforeSourcesAndSourcesTakeAtMostHalf() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 40, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 20, stage: .source) == .enqueued)  // 60 > half
        #expect(machine.reserve(id: 3, bytes: 50, stage: .decode) == .admitted)  // decodes may use the rest
        #expect(machine.reserve(id: 4, bytes: 30, stage: .decode) == .enqueued)
        // The source leaves: the waiting decode goes first, then the source fits its half again.
        #expect(machine.release(40, reserved: 40, stage: .source).map(\.id) == [4, 2])
        #expect(machine.used == 100 && machine.sourceBytes == 20)
    }

    @Test func aDecodeIsAdmittedWhenNoneRunsSoTheLineAlwaysMoves() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 50, stage: .source) == .admitted)
        // 50 held by a source that waits for its decode; the decode needs 80: admitted anyway.
        #expect(machine.reserve(id: 2, bytes: 80, stage: .decode) == .admitted)
        #expect(machine.used == 130 && machine.peak == 130)
        #expect(machine.reserve(id: 3, bytes: 80, stage: .decode) == .enqueued)  // one such decode at a time
        #expect(machine.release(80, reserved: 80, stage: .decode).map(\.id) == [3])
    }

    @Test func decodeSlotsBoundDecodesWhateverTheirSize() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.reserve(id: 1, bytes: 1, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 1, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 4, bytes: 1, stage: .source) == .enqueued)  // behind a waiting decode
        #expect(machine.release(1, reserved: 1, stage: .decode).map(\.id) == [3, 4])
        #expect(machine.reserve(id: 5, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 6, bytes: 1, stage: .source) == .enqueued)
        // The waiting decode leaves (cancelled, timed out): the source behind it goes.
        let (removed, admitted) = machine.remove(id: 5)
        #expect(removed?.id == 5 && admitted.map(\.id) == [6] && machine.queued == 0)
        #expect(machine.remove(id: 6).removed == nil)
    }

    /// Before any decode has told its size, a decode is assumed to need a slot's share of half
    /// the limit: a cold start's downloads take at most the other half.
    @Test func aColdStartsDownloadsTakeHalfTheLimit() {
        var machine = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.typicalDecode == 100)
        #expect(machine.reserve(id: 1, bytes: 150, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 60, stage: .source) == .enqueued)  // 210 > 400 - 2 × 100
        #expect(machine.release(150, reserved: 150, stage: .source).map(\.id) == [2])  // its download done
        #expect(machine.reserve(id: 3, bytes: 140, stage: .source) == .admitted)  // 200
    }

    /// Downloads take at most what decodes of the typical size in every slot leave, and a free
    /// slot keeps room for its decode (downloaded sources wait for their decode holding their
    /// bytes: if they fill the budget, decodes run one at a time; measured, a burst of 20 MP
    /// sources kept 1.6 of 2 cores busy).
    @Test func downloadsLeaveRoomForADecodeInEverySlot() {
        var machine = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        for id in 1...40 {  // decodes of 100 teach the typical size
            #expect(machine.reserve(id: UInt64(id), bytes: 100, stage: .decode) == .admitted)
            #expect(machine.release(100, reserved: 100, stage: .decode).isEmpty)
        }
        #expect((100...102).contains(machine.typicalDecode))  // downloads: at most 400 - 2 × 100
        #expect(machine.reserve(id: 41, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 42, bytes: 100, stage: .decode) == .admitted)  // both slots busy
        #expect(machine.reserve(id: 43, bytes: 60, stage: .source) == .admitted)
        #expect(machine.reserve(id: 44, bytes: 100, stage: .source) == .admitted)  // 160 downloading
        #expect(machine.reserve(id: 45, bytes: 60, stage: .source) == .enqueued)  // 220: past the share
        #expect(machine.release(60, reserved: 60, stage: .source).map(\.id) == [45])

        var free = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        for id in 1...40 {
            _ = free.reserve(id: UInt64(id), bytes: 100, stage: .decode)
            _ = free.release(100, reserved: 100, stage: .decode)
        }
        #expect(free.reserve(id: 41, bytes: 100, stage: .decode) == .admitted)  // one slot free
        free.charge(150)  // downloaded sources waiting for their decodes
        #expect(free.reserve(id: 42, bytes: 20, stage: .source) == .admitted)  // the one download always allowed
        // 270 held: 40 more would leave 90, less than the decode of 100 the free slot will run.
        #expect(free.reserve(id: 43, bytes: 40, stage: .source) == .enqueued)
        #expect(free.reserve(id: 44, bytes: 100, stage: .decode) == .admitted)  // so it fits: both slots busy
        #expect(free.release(100, reserved: 100, stage: .decode).isEmpty)
        #expect(free.release(150, reserved: 0, stage: nil).map(\.id) == [43])
    }

    /// With slots, a decode that fits may go before a waiting one that does not, while a slot is
    /// free; a waiter is passed at most twice.
    @Test func aSmallerDecodeBackfillsAFreeSlotAtMostTwicePerWaiter() {
        var machine = Machine(limit: 300, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.reserve(id: 1, bytes: 200, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 250, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 50, stage: .decode) == .admitted)  // passes 2
        #expect(machine.reserve(id: 4, bytes: 50, stage: .decode) == .enqueued)  // no slot free
        #expect(machine.release(50, reserved: 50, stage: .decode).map(\.id) == [4])  // passes 2 again
        #expect(machine.release(50, reserved: 50, stage: .decode).isEmpty)
        #expect(machine.reserve(id: 5, bytes: 50, stage: .decode) == .enqueued)  // 2 was passed twice
        #expect(machine.release(200, reserved: 200, stage: .decode).map(\.id) == [2, 5])
    }

    @Test func chargesCountButNeverWaitAndLeavingTheLineAdmitsWhoWasBehind() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        machine.charge(90)
        #expect(machine.reserve(id: 1, bytes: 20, stage: .decode) == .admitted)  // no decode runs
        #expect(machine.reserve(id: 2, bytes: 20, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 5, stage: .source) == .enqueued)
        _ = machine.release(20, reserved: 20, stage: .decode)  // 2 admitted (no decode running)
        #expect(machine.activeDecodes == 1 && machine.queued == 1)
        #expect(machine.release(90, reserved: 0, stage: nil).map(\.id) == [3])
        #expect(machine.used == 25)
    }

    @Test func aLongLineIsServedInOrderAcrossItsStorageCompaction() {
        var machine = Machine(limit: 100, maximumQueueLength: 200)
        #expect(machine.reserve(id: 0, bytes: 100, stage: .decode) == .admitted)
        for id in 1...100 { #expect(machine.reserve(id: UInt64(id), bytes: 100, stage: .decode) == .enqueued) }
        // One leaves from the middle after the line's storage has been compacted.
        var admitted: [UInt64] = []
        for _ in 0..<55 { admitted += machine.release(100, reserved: 100, stage: .decode).map(\.id) }
        #expect(machine.remove(id: 70).removed?.id == 70)
        while machine.activeDecodes > 0 { admitted += machine.release(100, reserved: 100, stage: .decode).map(\.id) }
        #expect(admitted == Array(1...69) + Array(71...100))
        #expect(machine.queued == 0 && machine.used == 0)
    }

    @Test func removingAWaiterThatIsNotWaitingChangesNothing() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 10, stage: .source) == .enqueued)
        let (removed, admitted) = machine.remove(id: 1)  // admitted, not waiting
        #expect(removed == nil && admitted.isEmpty)
        #expect(machine.remove(id: 99).removed == nil)
        #expect(machine.queued == 1 && machine.used == 100)
    }

    @Test func underPressureASourceIsAdmittedOnlyWhenNothingIsHeld() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10)
        _ = machine.setPressure(true)
        #expect(machine.underPressure)
        #expect(machine.reserve(id: 1, bytes: 10, stage: .source) == .admitted, "nothing held: the line moves")
        #expect(machine.reserve(id: 2, bytes: 10, stage: .source) == .enqueued)
        #expect(machine.release(10, reserved: 10, stage: .source).map(\.id) == [2], "nothing held again")
        #expect(machine.reserve(id: 3, bytes: 10, stage: .source) == .enqueued)
        #expect(machine.setPressure(false).map(\.id) == [3])
    }

    @Test func waitersInLineCountTheDecodesAheadOfEach() {
        var machine = Machine(limit: 100, maximumQueueLength: 10, decodeSlots: 1)
        #expect(machine.reserve(id: 1, bytes: 40, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 50, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 50, stage: .decode) == .enqueued)  // the slot is taken
        #expect(machine.reserve(id: 4, bytes: 5, stage: .source) == .enqueued)
        #expect(machine.reserve(id: 5, bytes: 5, stage: .source) == .enqueued)
        #expect(machine.decodesAhead(of: .decode) == 2)  // the running decode and the waiting one
        #expect(machine.decodesAhead(of: .source) == 5)  // and the admitted source and both waiting ones
        let line = machine.waitersInLine()
        #expect(line.map(\.id) == [3, 4, 5])
        // The decode waits for the running one; each source for both decodes, the source admitted and
        // the sources before it.
        #expect(line.map(\.ahead) == [1, 3, 4])
    }

    @Test func theTypicalDecodeFollowsTheDecodesReserved() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10, decodeSlots: 1)
        #expect(machine.typicalDecode == 500)
        _ = machine.reserve(id: 1, bytes: 100, stage: .decode)
        #expect(machine.typicalDecode == (500 * 4 + 100) / 5)
        _ = machine.release(100, reserved: 100, stage: .decode)
        _ = machine.reserve(id: 2, bytes: 0, stage: .decode)
        #expect(machine.typicalDecode == 420 * 4 / 5)
        #expect(Machine(limit: 1_000, maximumQueueLength: 10).typicalDecode == 500, "no slots: one slot's share")
    }

    /// Work that may be left out (a preview) is charged only when it fits now, never before what
    /// waits in line, never under pressure; it is released as a charge.
    @Test func aChargeIfRoomTakesOnlyFreeRoomAndNeverJumpsTheLine() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 60, stage: .decode) == .admitted)
        var charged = machine.chargeIfRoom(40)
        #expect(charged && machine.used == 100, "exactly what is free")
        charged = machine.chargeIfRoom(1)
        #expect(!charged && machine.used == 100)
        #expect(machine.release(40, reserved: 0, stage: nil).isEmpty)
        #expect(machine.reserve(id: 2, bytes: 50, stage: .decode) == .enqueued)
        charged = machine.chargeIfRoom(10)
        #expect(!charged, "the room is the waiting decode's")
        #expect(machine.release(60, reserved: 60, stage: .decode).map(\.id) == [2])
        charged = machine.chargeIfRoom(10)
        #expect(charged && machine.used == 60)
        _ = machine.setPressure(true)
        charged = machine.chargeIfRoom(1)
        #expect(!charged, "nothing that can be left out under pressure")
    }

    @Test func thePeakRemembersTheMostEverHeld() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        _ = machine.reserve(id: 1, bytes: 30, stage: .source)
        machine.charge(50)
        _ = machine.release(50, reserved: 0, stage: nil)
        _ = machine.release(30, reserved: 30, stage: .source)
        #expect(machine.used == 0 && machine.peak == 80)
    }

    @Test func zeroBytesAreAdmittedAndTheWholeLimitFitsExactly() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 0, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 0, stage: .decode) == .admitted, "no bytes always fit")
        #expect(machine.reserve(id: 4, bytes: 101, stage: .decode) == .refusedTooLarge)
    }

    /// Random operations from a fixed seed: the books always balance, no waiter is lost or admitted
    /// twice, and once everything held is released the line is empty (it always moves).
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomOperationsKeepTheBooksAndTheLineMoving(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let slots: Int? = seed % 2 == 0 ? nil : Int(seed % 3) + 1
        var machine = Machine(limit: 1_000, maximumQueueLength: 16, decodeSlots: slots)
        var held: [UInt64: (bytes: Int, stage: MemoryBudget.Stage)] = [:]
        var waiting: [UInt64: (bytes: Int, stage: MemoryBudget.Stage)] = [:]
        var nextID: UInt64 = 0
        func admit(_ waiters: [Machine.Waiter]) {
            for waiter in waiters {
                #expect(waiting.removeValue(forKey: waiter.id) != nil, "admitted \(waiter.id), which was not waiting")
                held[waiter.id] = (waiter.bytes, waiter.stage)
            }
        }
        func checkBooks() {
            #expect(machine.used == held.values.reduce(0) { $0 + $1.bytes })
            #expect(machine.activeDecodes == held.values.filter { $0.stage == .decode }.count)
            #expect(machine.activeSources == held.values.filter { $0.stage == .source }.count)
            #expect(machine.queued == waiting.count && machine.queued <= 16)
            if let slots { #expect(machine.activeDecodes <= slots) }
        }
        for _ in 0..<2_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                nextID += 1
                let stage: MemoryBudget.Stage = Bool.random(using: &random) ? .decode : .source
                let bytes = Int.random(in: 0...1_100, using: &random)
                switch machine.reserve(id: nextID, bytes: bytes, stage: stage) {
                case .admitted: held[nextID] = (bytes, stage)
                case .enqueued: waiting[nextID] = (bytes, stage)
                case .refusedTooLarge: #expect(bytes > 1_000)
                case .refusedQueueFull: #expect(waiting.count == 16)
                }
            case 5..<8:
                guard let id = held.keys.sorted().randomElement(using: &random),
                    let entry = held.removeValue(forKey: id)
                else { continue }
                admit(machine.release(entry.bytes, reserved: entry.bytes, stage: entry.stage))
            case 8:
                guard let id = waiting.keys.sorted().randomElement(using: &random) else { continue }
                let (removed, admitted) = machine.remove(id: id)
                #expect(removed?.id == id)
                waiting[id] = nil
                admit(admitted)
            default:
                admit(machine.setPressure(Bool.random(using: &random)))
            }
            checkBooks()
        }
        admit(machine.setPressure(false))
        while let id = held.keys.min(), let entry = held.removeValue(forKey: id) {
            admit(machine.release(entry.bytes, reserved: entry.bytes, stage: entry.stage))
            checkBooks()
        }
        #expect(waiting.isEmpty && machine.queued == 0 && machine.used == 0)
    }
}
