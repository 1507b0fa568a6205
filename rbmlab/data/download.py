"""Downloading one sha256-pinned file over HTTP(S) with pooch.

pooch streams to a temporary file beside the target and moves it into place only when its sha256
matches, so a failed or corrupt download leaves nothing behind. Proxies are taken from the usual
``HTTPS_PROXY`` / ``HTTP_PROXY`` variables (requests reads them).
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

TIMEOUT_S = 60  # per connect / read, not for the whole transfer


class DownloadFailed(Exception):
    """A download that did not give the pinned file; the message is one line, the reason."""


def squash(text: str, limit: int = 240) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def no_space_or(exc: OSError, where: Path) -> str:
    """One line for an OSError while writing under ``where``; a full disk says so plainly."""
    if exc.errno == errno.ENOSPC:
        return f"no space left on the device holding {where}"
    return squash(str(exc))


def download(url: str, sha256: str, target: Path) -> Path:
    """Fetch ``url`` (http or https) to ``target``, which exists afterwards only if its sha256 is
    ``sha256``.

    Raises DownloadFailed for a network error, an HTTP error status, a checksum mismatch or a full
    disk.
    """
    import pooch  # noqa: PLC0415  (imports requests: only when a download happens)
    import requests  # noqa: PLC0415

    log = pooch.get_logger()
    level = log.level
    log.setLevel(logging.WARNING)  # our caller prints its own line; pooch's would repeat the URL
    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{sha256}",
            fname=target.name,
            path=target.parent,
            downloader=pooch.HTTPDownloader(timeout=TIMEOUT_S, progressbar=False),
        )
    except requests.exceptions.RequestException as exc:  # first: some (InvalidURL) are ValueErrors
        raise DownloadFailed(f"downloading {url} failed: {squash(str(exc)) or type(exc).__name__}") from None
    except ValueError:  # pooch's hash check; it has deleted the download
        raise DownloadFailed(
            f"the file from {url} does not have sha256 {sha256} (corrupt download or "
            "a mirror serving another file; removed)"
        ) from None
    except OSError as exc:
        raise DownloadFailed(f"downloading {url} failed: {no_space_or(exc, target.parent)}") from None
    finally:
        log.setLevel(level)
    return target
