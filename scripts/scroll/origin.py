#!/usr/bin/env python3
"""A slow origin for scripts/scroll-benchmark: the files of a directory at /ANY/PREFIX/NAME (the last
path segment names the file), over HTTP/1.1 keep-alive, with a latency before each answer and one
bandwidth shared by every connection (chunks are paced in turn, so parallel transfers share it).

    origin.py DIR PORT [--rate BYTES_PER_S] [--latency SECONDS]

GET /stats answers {"bytes": N, "requests": M} (body bytes sent so far); GET /reset zeroes them.
"""
import argparse
import asyncio
import json
import os
import time

CHUNK = 16384


class Origin:
    def __init__(self, root, rate, latency):
        self.root, self.rate, self.latency = root, rate, latency
        self.next_free = 0.0
        self.bytes = 0
        self.requests = 0
        self.files = {}

    def body(self, name):
        if name not in self.files:
            path = os.path.join(self.root, os.path.basename(name))
            self.files[name] = open(path, "rb").read() if os.path.isfile(path) else None
        return self.files[name]

    async def pace(self, size):
        """Waits until `size` more bytes fit the shared bandwidth."""
        now = time.monotonic()
        start = max(now, self.next_free)
        self.next_free = start + size / self.rate
        delay = self.next_free - now
        if delay > 0:
            await asyncio.sleep(delay)

    async def handle(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                if path == "/stats":
                    await self.answer(writer, 200, json.dumps({"bytes": self.bytes, "requests": self.requests}).encode(), "application/json")
                    continue
                if path == "/reset":
                    self.bytes = self.requests = 0
                    await self.answer(writer, 200, b"{}", "application/json")
                    continue
                self.requests += 1
                await asyncio.sleep(self.latency)
                body = self.body(path.split("?")[0].rsplit("/", 1)[-1])
                if body is None:
                    await self.answer(writer, 404, b"not found\n", "text/plain")
                    continue
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nCache-Control: max-age=86400\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(body))
                for offset in range(0, len(body), CHUNK):
                    chunk = body[offset:offset + CHUNK]
                    await self.pace(len(chunk))
                    writer.write(chunk)
                    await writer.drain()
                    self.bytes += len(chunk)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def answer(self, writer, status, body, content_type):
        reason = {200: "OK", 404: "Not Found"}[status]
        writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (status, reason.encode(), content_type.encode(), len(body)) + body)
        await writer.drain()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("port", type=int)
    parser.add_argument("--rate", type=float, default=4e6)
    parser.add_argument("--latency", type=float, default=0.05)
    options = parser.parse_args()
    origin = Origin(options.root, options.rate, options.latency)
    server = await asyncio.start_server(origin.handle, "127.0.0.1", options.port, backlog=1024)
    async with server:
        await server.serve_forever()


asyncio.run(main())
