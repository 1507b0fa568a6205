"""The one exception type that the CLI turns into a one-line message."""


class RbmlabError(Exception):
    """A user-facing error: bad config key or value, missing file, unreadable checkpoint.

    The message must make sense on its own, on one line, without a traceback.
    """
