"""Generated from proto/covr/v1 by scripts/gen_proto.py; do not edit."""
