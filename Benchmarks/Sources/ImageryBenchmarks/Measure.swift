import Foundation

/// Runs `body` `rounds` times and returns the median wall time in seconds.
func medianSeconds(rounds: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = ContinuousClock.now
        try body()
        samples.append(seconds(ContinuousClock.now - start))
    }
    return samples.sorted()[samples.count / 2]
}

func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}

/// One row of a side-by-side table: what was measured, ours, the peer's, and the ratio.
struct Comparison {
    let name: String
    let unit: String
    let ours: Double
    let peer: Double
    let peerName: String
    /// `ours / peer` for rates (higher is better).
    var ratio: Double { ours / peer }
}

func printTable(_ title: String, _ rows: [Comparison]) {
    print("\n### \(title)\n")
    print("| measurement | Imagery | peer | peer value | Imagery / peer |")
    print("|---|---:|---|---:|---:|")
    for row in rows {
        let digits = max(row.ours, row.peer) < 100 ? 2 : 0
        print(String(format: "| %@ | %.\(digits)f %@ | %@ | %.\(digits)f %@ | **%.2fx** |",
                     row.name, row.ours, row.unit, row.peerName, row.peer, row.unit, row.ratio))
    }
}
