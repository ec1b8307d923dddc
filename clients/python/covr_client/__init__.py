"""Client SDK for the COVR graph service.

Installable on its own (``pip install clients/python``). The gRPC ``Client`` and ``AsyncClient``
arrive with the service contract (proto/covr/v1); this package holds only its version until then.
"""

__version__ = "0.1.0"
