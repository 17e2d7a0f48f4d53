"""``python -m kubefake ...`` runs the bundled binary with the same arguments."""

import os
import sys

from kubefake import find_kubefake_bin


def main() -> None:
    binary = find_kubefake_bin()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
