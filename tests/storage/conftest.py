"""moto's S3 server (a real S3 HTTP API) on loopback, and a fresh bucket per test."""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import httpx
import pytest


@dataclass(frozen=True)
class S3:
    """A bucket on the running server, and the ``storage.options`` that reach it."""

    endpoint: str
    bucket: str

    @property
    def options(self) -> dict[str, str]:
        return {
            "endpoint": self.endpoint,
            "allow_http": "true",
            "region": "us-east-1",
            "aws_access_key_id": "huichat-test",
            "aws_secret_access_key": "huichat-test-secret",
        }

    def uri(self, prefix: str = "huichat") -> str:
        return f"s3://{self.bucket}/{prefix}"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's server in a process of its own (the replicas' and the clients' work does not share
    its interpreter), answering real S3 HTTP on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{endpoint}/moto-api/", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, "moto's server exited"
                assert time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def s3(s3_endpoint: str) -> S3:
    """An empty bucket of its own for one test."""
    found = S3(s3_endpoint, f"huichat-{secrets.token_hex(6)}")
    options = found.options
    boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name=options["region"],
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=options["aws_secret_access_key"],
    ).create_bucket(Bucket=found.bucket)
    return found
