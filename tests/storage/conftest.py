"""moto's S3 server (a real S3 HTTP API) on loopback, and a fresh bucket per test."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import pytest

from benchmarks.counted_s3 import CountedS3, free_port


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
    its interpreter), answering real S3 HTTP on a free loopback port — the benchmarks' server."""
    server = CountedS3.start(free_port())
    try:
        yield server.endpoint
    finally:
        server.stop()


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
