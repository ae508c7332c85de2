"""``python -m torchlight info`` and ``python -m torchlight build-kernels``."""

import sys

USAGE = """usage: python -m torchlight COMMAND [ARGS]

commands:
  info           installed versions, which backends and tiers work here, GPU and kernel libraries
  build-kernels  build the CUDA C kernel libraries with nvcc, or with --simulator for the CPU
                 (python -m torchlight build-kernels --help)"""


def main(argv: list[str]) -> int:
    """Dispatch to a command; returns the exit status."""
    command, rest = (argv[0], argv[1:]) if argv else (None, [])
    if command == "info":
        from .info import main as info_main

        return info_main(["info", *rest])
    if command == "build-kernels":
        from .build_kernels import main as build_main

        return build_main(rest)
    if command in ("-h", "--help"):
        print(USAGE)
        return 0
    problem = f"unknown command {command!r}" if command else "no command given"
    print(f"{USAGE}\n\npython -m torchlight: {problem}", file=sys.stderr)
    return 2


sys.exit(main(sys.argv[1:]))
