"""``python -m covr.service.healthcheck``: exit 0 when the local service answers SERVING.

The container's ``HEALTHCHECK`` runs this: it reads the same settings as the server (port, TLS
certificate), asks ``grpc.health.v1.Health/Check`` for ``covr.v1.CovrService`` and exits 1 on
anything else (NOT_SERVING while the store is down, no answer within the timeout).
"""

from __future__ import annotations

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from covr.settings import get_settings

SERVICE = "covr.v1.CovrService"


def check(target: str, *, timeout: float, root_certificate: bytes | None = None) -> bool:
    """Whether the service at ``target`` reports SERVING."""
    if root_certificate is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=root_certificate)
        channel = grpc.secure_channel(
            target, credentials, options=[("grpc.ssl_target_name_override", "localhost")]
        )
    else:
        channel = grpc.insecure_channel(target)
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=timeout)
        except grpc.RpcError as exc:
            print(f"unhealthy: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return False
    ok = bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
    if not ok:
        print(f"unhealthy: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}")
    return ok


def main(argv: list[str] | None = None) -> int:
    settings = get_settings().service
    host = settings.service_host
    if host in ("0.0.0.0", "", "::"):  # noqa: S104 - a bind-all address is reached locally
        host = "127.0.0.1"
    parser = argparse.ArgumentParser(description="gRPC health check of the COVR service")
    parser.add_argument("--target", default=f"{host}:{settings.service_port}")
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args(argv)
    cert = settings.service_tls_cert.read_bytes() if settings.service_tls_cert else None
    return 0 if check(args.target, timeout=args.timeout, root_certificate=cert) else 1


if __name__ == "__main__":
    sys.exit(main())
