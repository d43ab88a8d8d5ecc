"""Headless Chromium for the tests that look at pages that build themselves after loading: a live
page driven over the DevTools protocol (``tests/act/test_html_report.py`` runs it one shot)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import time

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)
#: Flags of every run: headless, no sandbox (containers), WebGL on the CPU (SwiftShader).
FLAGS = ("--headless", "--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader")


class LivePage:
    """``url`` open in headless Chromium, driven over the DevTools protocol on a pipe
    (``--remote-debugging-pipe``: commands on the child's fd 3, answers on its fd 4)."""

    def __init__(self, url: str, width: int = 1600, height: int = 900) -> None:
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()

        def onto_3_and_4() -> None:  # in the child: the pipe's ends where Chromium looks for them
            ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]  # out of the way
            for target, fd in zip((3, 4), ends):
                os.dup2(fd, target)  # inheritable

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=onto_3_and_4,
            close_fds=False,  # would close 3 and 4 after preexec_fn; the parent's own fds are not inheritable
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._reader = os.fdopen(self._in, "rb")
        self._next = 0
        self._buffer = b""
        self._session = None
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send("Page.navigate", url=url)

    def send(self, method: str, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            reply = json.loads(self._read())
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> bytes:
        """The next message from Chromium (messages end with a NUL byte)."""
        while b"\0" not in self._buffer:
            chunk = self._reader.read1(1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return message

    def evaluate(self, expression: str):
        """The value of JavaScript ``expression`` in the page."""
        return self.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> None:
        """Wait until ``expression`` is true in the page; fail the test after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the page never got to {expression!r}: {self.evaluate('document.body.innerText')!r}"
                )
            time.sleep(0.25)

    def screenshot(self) -> bytes:
        """The page as a PNG."""
        return base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._reader.close()
        os.close(self._out)
