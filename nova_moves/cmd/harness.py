"""nova-moves-harness: run a scenario against real processes (issue 6)."""
import sys


def main():
    from nova_moves.harness import cli
    sys.exit(cli.main(sys.argv[1:]))
