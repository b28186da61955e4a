import Foundation
import Testing

@testable import Imagery

/// A download's bytes against the budget: the announced size reserved first, what arrives past it charged.
@Suite("SourceAdmission")
struct SourceAdmissionTests {
    static func budget(limit: Int = 10_000) -> MemoryBudget {
        MemoryBudget(configuration: .init(limit: limit, maximumWait: .seconds(3600)))
    }

    @Test func withoutABudgetEverythingIsANoOp() async throws {
        let admission = SourceAdmission(budget: nil, deadline: nil)
        #expect(!admission.isActive)
        try await admission.reserve(1 << 40)
        admission.received(1 << 40)
        admission.release()
    }

    @Test func theAnnouncedSizeIsReservedAndBytesPastItAreCharged() async throws {
        let budget = Self.budget()
        let admission = SourceAdmission(budget: budget, deadline: nil)
        #expect(admission.isActive)
        try await admission.reserve(1_000)
        #expect(budget.snapshot.used == 1_000 && budget.snapshot.admitted == 1)
        admission.received(600)
        #expect(budget.snapshot.used == 1_000, "within the reservation")
        admission.received(1_500)  // the origin sent more than it announced
        #expect(budget.snapshot.used == 1_500)
        admission.release()
        #expect(budget.snapshot.used == 0)
        admission.release()  // once only
        #expect(budget.snapshot.used == 0)
    }

    @Test func bytesOfALoaderThatAnnouncesNothingAreChargedAsTheyArrive() async throws {
        let budget = Self.budget()
        let admission = SourceAdmission(budget: budget, deadline: nil)
        admission.received(300)
        #expect(budget.snapshot.used == 300 && budget.snapshot.admitted == 0, "a charge: never waits, never refused")
        admission.received(800)
        #expect(budget.snapshot.used == 800)
        admission.received(0)
        admission.received(-5)
        #expect(budget.snapshot.used == 800)
        admission.release()
        #expect(budget.snapshot.used == 0)
    }

    @Test func aLaterAnnouncementReplacesWhatWasHeldBefore() async throws {
        let budget = Self.budget()
        let admission = SourceAdmission(budget: budget, deadline: nil)
        admission.received(400)  // charged before the response said its size
        try await admission.reserve(2_000)
        #expect(budget.snapshot.used == 2_000)
        try await admission.reserve(500)  // a redirect's final response
        #expect(budget.snapshot.used == 500)
        admission.received(500)
        #expect(budget.snapshot.used == 500)
        admission.release()
        #expect(budget.snapshot.used == 0)
    }

    @Test func anUnknownSizeReservesNothingButStillTakesItsPlace() async throws {
        let budget = Self.budget()
        let admission = SourceAdmission(budget: budget, deadline: nil)
        try await admission.reserve(nil)
        #expect(budget.snapshot.used == 0 && budget.snapshot.admitted == 1)
        admission.received(250)
        #expect(budget.snapshot.used == 250)
        admission.release()
        #expect(budget.snapshot.used == 0)
    }

    @Test func aSizeLargerThanTheBudgetIsRefusedAndAHugeOneIsClamped() async throws {
        let budget = Self.budget(limit: 1_000)
        let admission = SourceAdmission(budget: budget, deadline: nil)
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: 1_001, limit: 1_000)) {
            try await admission.reserve(1_001)
        }
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: Int.max, limit: 1_000)) {
            try await admission.reserve(.max)
        }
        #expect(budget.snapshot.refusedTooLarge == 2 && budget.snapshot.used == 0)
    }

    @Test func aDeadlineAlreadyPastRefusesADownloadThatMustWait() async throws {
        let budget = Self.budget(limit: 1_000)
        let held = try await budget.reserve(1_000, for: .decode)
        let admission = SourceAdmission(budget: budget, deadline: ContinuousClock.now - .seconds(1))
        await #expect(throws: MemoryBudgetError.self) { try await admission.reserve(10) }
        held.release()
        try await admission.reserve(10)  // nothing held: admitted, deadline or not
        #expect(budget.snapshot.used == 10)
        admission.release()
    }
}
