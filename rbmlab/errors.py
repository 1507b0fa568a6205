"""The one exception type that the CLI turns into a one-line message, and the way it is shown."""

import sys


class RbmlabError(Exception):
    """A user-facing error: bad config key or value, missing file, unreadable checkpoint.

    The message must make sense on its own, on one line, without a traceback.
    """


def fail(message: str, code: int = 2) -> None:
    """Print ``rbmlab: error: <message>`` on stderr and exit with ``code``."""
    print(f"rbmlab: error: {message}", file=sys.stderr)
    sys.exit(code)
