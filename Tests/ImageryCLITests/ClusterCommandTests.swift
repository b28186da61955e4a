import ArgumentParser
import ImageryServer
import Testing

@testable import ImageryCLI

/// `imagery cluster nginx-config`'s arguments.
@Suite struct ClusterCommandTests {
    static func parse(_ arguments: [String]) throws -> NginxConfigCommand {
        guard
            let command = try ImageryCommand.parseAsRoot(["cluster", "nginx-config"] + arguments) as? NginxConfigCommand
        else {
            throw ParseTestError.otherCommand
        }
        return command
    }

    @Test func defaults() throws {
        let command = try Self.parse(["--instance", "10.0.0.1:8081"])
        #expect(command.instances == ["10.0.0.1:8081"] && command.listen == "8080" && command.balance == .consistent)
        #expect(command.failTimeout == 10 && command.standalone == nil && !command.accessLog)
    }

    @Test func everyOption() throws {
        let command = try Self.parse([
            "--instance", "a:1,b:2", "--instance", "c:3", "--listen", "0.0.0.0:80", "--balance", "round-robin",
            "--fail-timeout", "30",
            "--standalone", "/tmp/nginx", "--access-log",
        ])
        #expect(
            command.instances == ["a:1,b:2", "c:3"] && command.listen == "0.0.0.0:80" && command.balance == .roundRobin)
        #expect(command.failTimeout == 30 && command.standalone == "/tmp/nginx" && command.accessLog)
    }

    @Test(
        arguments: [
            ([], "give at least one --instance HOST:PORT"),
            (["--instance", "a"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not 'a'"),
            (["--instance", ":80"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not ':80'"),
            (["--instance", "a:0"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not 'a:0'"),
            (["--instance", "a:65536"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not 'a:65536'"),
            (["--instance", "a:1,b c:2"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not 'b c:2'"),
            (["--instance", "a;b:1"], "--instance takes HOST:PORT, such as 127.0.0.1:8081, not 'a;b:1'"),
            (["--instance", "a:1", "--listen", "80;"], "--listen takes a port or ADDRESS:PORT"),
            (["--instance", "a:1", "--listen", ""], "--listen takes a port or ADDRESS:PORT"),
            (["--instance", "a:1", "--fail-timeout", "0"], "--fail-timeout takes 1 to 86400 seconds"),
            (["--instance", "a:1", "--fail-timeout", "86401"], "--fail-timeout takes 1 to 86400 seconds"),
            (
                ["--instance", "a:1", "--balance", "random"],
                "The value 'random' is invalid for '--balance <balance>'. Please provide one of 'consistent' and 'round-robin'."
            ),
        ] as [([String], String)])
    func aWrongArgumentIsToldByItsName(_ arguments: [String], _ message: String) {
        #expect(parseError(["cluster", "nginx-config"] + arguments) == message)
    }
}
