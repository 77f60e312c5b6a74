# SPDX-License-Identifier: Apache-2.0
# Fixtures for the Redis module's tests: each test gets its own redis-server on a free loopback
# port, with the module loaded, in the test's tmp_path, and the server is always stopped.
#
# Run with the system Python, which has python3-redis and pytest:
#   /usr/bin/python3 -m pytest tests/redis
# The module is $SSTFILTER_REDIS_MODULE, by default build/redis/libsstfilter_redis.so of this checkout.
# Without it, or without redis-server, every test here is skipped, with the reason.
#
# Server options follow redis.conf's documentation (Redis 7.0): --save "" (no RDB snapshots),
# --appendonly, --appendfsync, --dir, --enable-debug-command (DEBUG RELOAD), SHUTDOWN NOSAVE NOW
# (https://redis.io/docs/latest/commands/shutdown/: NOW skips waiting for lagging replicas).
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis

MODULE = os.environ.get(
    "SSTFILTER_REDIS_MODULE",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "redis",
                 "libsstfilter_redis.so"))
REDIS_SERVER = shutil.which("redis-server")
START_TIMEOUT = 10.0


def _skip_reason():
    if REDIS_SERVER is None:
        return "redis-server is not installed (Debian: apt-get install redis-server)"
    if not os.path.isfile(MODULE):
        return (f"the Redis module {MODULE} is not built "
                "(build it, or point SSTFILTER_REDIS_MODULE at it)")
    return None


def free_port():
    """A loopback port that was free a moment ago (the OS picks it for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server process with the module loaded. `extra_args` come after the defaults, so
    they override them (e.g. "--appendonly", "yes"). restart() keeps the port, dir and args."""

    def __init__(self, directory, extra_args=(), name="redis"):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.name = name
        self.extra_args = [str(a) for a in extra_args]
        self.port = free_port()
        self.proc = None
        self.log_path = os.path.join(self.dir, f"{name}.log")

    def args(self):
        return [REDIS_SERVER,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--loadmodule", MODULE,
                "--enable-debug-command", "yes",
                "--save", "",
                "--appendonly", "no",
                "--dir", self.dir,
                "--daemonize", "no",
                "--logfile", "",
                *self.extra_args]

    def start(self):
        assert not self.running(), f"{self.name} is already running"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.dir)
        deadline = time.monotonic() + START_TIMEOUT
        probe = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1,
                            socket_connect_timeout=1)
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.proc.returncode} while "
                                       f"starting:\n{self.log_tail()}")
                try:
                    if probe.ping():
                        return self
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    pass
                if time.monotonic() > deadline:
                    self.kill9()
                    raise RuntimeError(f"{self.name} did not answer PING within "
                                       f"{START_TIMEOUT}s:\n{self.log_tail()}")
                time.sleep(0.02)
        finally:
            probe.close()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def client(self, **kwargs):
        options = dict(host="127.0.0.1", port=self.port, decode_responses=False,
                       socket_timeout=120)
        options.update(kwargs)
        return redis.Redis(**options)

    def stop(self):
        """SHUTDOWN NOSAVE (the AOF, when on, is still flushed), then SIGKILL if it lingers."""
        if not self.running():
            return
        c = self.client(socket_timeout=10)
        try:
            c.execute_command("SHUTDOWN", "NOSAVE", "NOW")
        except (redis.ConnectionError, redis.TimeoutError):
            pass  # the server closed the connection: it is going down
        except redis.ResponseError:
            pass  # refused: killed below
        finally:
            c.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill9()

    def kill9(self):
        if self.running():
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=15)

    def restart(self):
        self.stop()
        return self.start()

    def log_tail(self, lines=40):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return "(no log)"


def stop_all(servers):
    """Stops each server, newest first; one that does not stop is killed."""
    for server in reversed(servers):
        try:
            server.stop()
        finally:
            if server.running():
                server.kill9()


@pytest.fixture(autouse=True, scope="session")
def _sstfilter_redis_prerequisites():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def redis_launcher(tmp_path):
    """launch(*extra_args, name=...) starts a RedisServer in tmp_path/<name>; all are stopped at
    the end of the test, the last started first."""
    servers = []

    def launch(*extra_args, name=None):
        name = name or f"redis{len(servers)}"
        server = RedisServer(tmp_path / name, extra_args, name=name)
        servers.append(server)
        return server.start()

    yield launch
    stop_all(servers)


@pytest.fixture
def server(redis_launcher):
    return redis_launcher()


@pytest.fixture
def r(server):
    client = server.client()
    yield client
    client.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, add the tail of each server's log to the report (crashes show up there)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        tmp = getattr(item, "funcargs", {}).get("tmp_path")
        if tmp is not None:
            for log in sorted(tmp.glob("*/*.log")):
                text = log.read_bytes().decode(errors="replace").splitlines()[-25:]
                report.sections.append((f"redis log {log.parent.name}", "\n".join(text)))
