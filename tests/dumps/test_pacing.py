"""A paced loop waits while another thread holds the loops, never in the holder's thread, and
never past the hold's lapse."""

from __future__ import annotations

import threading
import time

import pytest

from fpinspect.dumps import pacing


@pytest.fixture(autouse=True)
def released():
    yield
    pacing.release()


def _loop_on_a_thread(items) -> threading.Event:
    done = threading.Event()
    threading.Thread(target=lambda: (list(pacing.paced(items)), done.set()), daemon=True).start()
    return done


def test_a_held_loop_waits_until_the_release():
    pacing.hold(60)
    done = _loop_on_a_thread(range(3))
    assert not done.wait(0.2) and pacing.held()
    pacing.release()
    assert done.wait(5) and not pacing.held()


def test_the_holder_itself_never_waits():
    pacing.hold(60)
    t0 = time.monotonic()
    assert list(pacing.paced(range(1000))) == list(range(1000))
    assert time.monotonic() - t0 < 5


def test_a_hold_lapses_and_a_hold_taken_again_lasts_until_the_later_end():
    pacing.hold(0.3)
    pacing.hold(0.1)
    t0 = time.monotonic()
    assert _loop_on_a_thread(range(10_000)).wait(5)
    assert time.monotonic() - t0 >= 0.25 and not pacing.held()


def test_holds_taken_again_and_again_do_not_starve_the_loops():
    """A key held down: a hold every 30 ms for 1.5 s. The loops still move on, in bursts; they
    had let one item through per hold (a 100 000-op outline took minutes)."""
    moved = 0
    stop = threading.Event()

    def loop():
        nonlocal moved
        for _ in pacing.paced(iter(stop.is_set, True)):  # until stop is set
            moved += 1

    pacing.hold(0.08)
    threading.Thread(target=loop, daemon=True).start()
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        pacing.hold(0.08)
        time.sleep(0.03)
    passed = moved
    stop.set()
    pacing.release()
    assert passed > 1000


def test_a_release_for_a_hold_leaves_a_later_hold_standing():
    pacing.hold(60)
    first = pacing.holds_taken()
    pacing.hold(60)  # a second key, pressed before the first one's answer was painted
    pacing.release(first)
    assert pacing.held(), "the second key's hold was released with the first's"
    pacing.release(pacing.holds_taken())
    assert not pacing.held()
