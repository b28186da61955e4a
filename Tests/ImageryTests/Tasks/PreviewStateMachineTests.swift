import Foundation
import Testing

@testable import Imagery

/// When a load's previews start and are handed out, without tasks or clocks: instants are made by
/// hand from one origin.
@Suite("PreviewStateMachine")
struct PreviewStateMachineTests {
    typealias Machine = PreviewStateMachine
    static let origin = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin + .milliseconds(milliseconds) }
    static func scans(_ count: Int) -> CompletedScans { CompletedScans(count: count, byteCount: 100 * count) }

    @Test func theFirstPreviewStartsOnceAScanIsComplete() {
        var machine = Machine(minimumInterval: .milliseconds(100))
        #expect(machine.received(Self.scans(0), now: Self.at(0)) == .none)
        #expect(machine.received(Self.scans(1), now: Self.at(0)) == .decode(Self.scans(1)))
        #expect(machine.isDecoding && !machine.wantsBody)
        #expect(machine.decodeEnded(.decoded, scans: 1, now: Self.at(5)) == true)
        #expect(machine.shownScans == 1 && machine.wantsBody)
    }

    @Test func atMostOnePreviewPerScanAndNoneBeforeTheInterval() {
        var machine = Machine(minimumInterval: .milliseconds(100))
        _ = machine.received(Self.scans(1), now: Self.at(0))
        _ = machine.decodeEnded(.decoded, scans: 1, now: Self.at(10))
        #expect(machine.received(Self.scans(1), now: Self.at(500)) == .none, "no new scan")
        #expect(machine.received(Self.scans(2), now: Self.at(109)) == .none, "too soon after the last one")
        #expect(machine.received(Self.scans(3), now: Self.at(110)) == .decode(Self.scans(3)))
    }

    @Test func nothingStartsWhileAPreviewDecodes() {
        var machine = Machine(minimumInterval: .zero)
        _ = machine.received(Self.scans(1), now: Self.at(0))
        #expect(machine.received(Self.scans(2), now: Self.at(50)) == .none)
        #expect(machine.decodeEnded(.decoded, scans: 1, now: Self.at(60)) == true)
        #expect(machine.received(Self.scans(2), now: Self.at(60)) == .decode(Self.scans(2)))
    }

    @Test func aSkippedPreviewIsTriedAgainAndAFailedOneEndsThem() {
        var machine = Machine(minimumInterval: .zero)
        _ = machine.received(Self.scans(1), now: Self.at(0))
        #expect(machine.decodeEnded(.skipped, scans: 1, now: Self.at(1)) == false)
        #expect(machine.shownScans == 0)
        #expect(machine.received(Self.scans(1), now: Self.at(2)) == .decode(Self.scans(1)), "the same scan again")
        #expect(machine.decodeEnded(.failed, scans: 1, now: Self.at(3)) == false)
        #expect(machine.phase == .stopped)
        #expect(machine.received(Self.scans(2), now: Self.at(4)) == .none)
    }

    @Test func anUnchangedPreviewIsNotHandedOutNorDecodedAgain() {
        var machine = Machine(minimumInterval: .milliseconds(100))
        _ = machine.received(Self.scans(1), now: Self.at(0))
        #expect(machine.decodeEnded(.decoded, scans: 1, now: Self.at(1)) == true)
        _ = machine.received(Self.scans(2), now: Self.at(200))
        #expect(machine.decodeEnded(.unchanged, scans: 2, now: Self.at(201)) == false)
        #expect(machine.shownScans == 2)
        #expect(machine.received(Self.scans(2), now: Self.at(202)) == .none, "its scans are not decoded again")
        #expect(
            machine.received(Self.scans(3), now: Self.at(202)) == .decode(Self.scans(3)),
            "the interval runs from the last one handed out")
    }

    @Test func aBodyWithNoScansToShowStopsPreviews() {
        var machine = Machine(minimumInterval: .zero)
        #expect(machine.received(nil, now: Self.at(0)) == .none)
        #expect(machine.phase == .stopped && !machine.wantsBody)
        #expect(machine.received(Self.scans(3), now: Self.at(1)) == .none)
    }

    /// Once the body is complete, none starts, but one decoding is still handed out (before the image);
    /// once the load has ended, nothing is.
    @Test func stoppedHandsOutTheLastDecodeAndFinishedNothing() {
        var machine = Machine(minimumInterval: .zero)
        _ = machine.received(Self.scans(1), now: Self.at(0))
        machine.stop()
        #expect(machine.decodeEnded(.decoded, scans: 1, now: Self.at(1)) == true)
        #expect(machine.received(Self.scans(2), now: Self.at(2)) == .none)

        var finished = Machine(minimumInterval: .zero)
        _ = finished.received(Self.scans(1), now: Self.at(0))
        finished.finish()
        #expect(finished.decodeEnded(.decoded, scans: 1, now: Self.at(1)) == false)
        #expect(finished.phase == .finished && finished.shownScans == 0)
    }
}
