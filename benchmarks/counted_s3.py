"""moto's S3 server (a real S3 HTTP API) in a process of its own, counting the requests it answers.

``huichat bench serve --storage`` puts the replicas' shared storage here: every request any
replica sends — LanceDB's reads and commits of the index tables, the API keys' objects — is
one round trip that a real object store would answer in tens of milliseconds instead of a
loopback's fraction of one. Counted at the server, so nothing in huichat is instrumented
and no client's requests are missed; ``GET /_bench/counts`` answers the counts so far.
Its own process, so its CPU does not share the load generator's interpreter.

``python -m benchmarks.counted_s3 --port N`` runs it (what ``CountedS3.start`` does).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpx

COUNTS_PATH = "/_bench/counts"
REGION = "us-east-1"


def _touched(path: str) -> str:
    """What a request reached: the index tables (LanceDB) or huichat's own shared objects."""
    return "index" if ".lance" in path else "objects"


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(port: int) -> None:
    """Answer S3 requests on loopback ``port`` until killed, counting them by method and what they touched."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    app = DomainDispatcherApplication(create_backend_app)
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if path == COUNTS_PATH:
            with lock:
                body = json.dumps(dict(counts)).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        with lock:
            counts[f"{environ['REQUEST_METHOD']} {_touched(path)}"] += 1
        result: Iterable[bytes] = app(environ, start_response)
        return result

    make_server("127.0.0.1", port, counted, threaded=True, request_handler=MotoRequestHandler).serve_forever()


@dataclass
class CountedS3:
    """The running server and the bucket the bench uses."""

    endpoint: str
    bucket: str
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, port: int, bucket: str = "huichat-bench") -> CountedS3:
        """Start the server process, wait until it answers, and make the bucket."""
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.counted_s3", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        found = cls(f"http://127.0.0.1:{port}", bucket, process)
        deadline = time.monotonic() + 120  # a loaded CI machine
        while True:
            try:
                found.counts()
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    found.stop()
                    raise RuntimeError("moto's S3 server did not start (is moto[server] installed?)") from None
                time.sleep(0.2)
        import boto3

        options = found.options
        boto3.client(
            "s3",
            endpoint_url=found.endpoint,
            region_name=REGION,
            aws_access_key_id=options["aws_access_key_id"],
            aws_secret_access_key=options["aws_secret_access_key"],
        ).create_bucket(Bucket=bucket)
        return found

    @property
    def options(self) -> dict[str, str]:
        """``storage.options`` that reach it."""
        return {
            "endpoint": self.endpoint,
            "allow_http": "true",
            "region": REGION,
            "aws_access_key_id": "huichat-bench",
            "aws_secret_access_key": "huichat-bench-secret",
        }

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/huichat"

    def counts(self) -> Counter[str]:
        """Requests answered so far, by ``METHOD index|objects``."""
        return Counter(httpx.get(self.endpoint + COUNTS_PATH, timeout=10).json())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.counted_s3", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    serve(parser.parse_args().port)


if __name__ == "__main__":
    main()
