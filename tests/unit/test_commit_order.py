"""commit_order.CommitOrder: a commit's followers wait for every earlier commit's, a failed
commit holds nobody back, and a write outside a writer job takes no ticket (docs/adr/0031)."""

from __future__ import annotations

import threading

from venom_mem_adapters.commit_order import CommitOrder


def test_a_later_commit_waits_for_the_earlier_turn_to_end() -> None:
    order = CommitOrder()
    first_ticket = threading.Event()
    first_may_end = threading.Event()
    seen: list[str] = []

    def first() -> None:
        with order.job():
            ticket = order.take()
            assert ticket is not None
            first_ticket.set()
            order.wait_turn(ticket)
            first_may_end.wait(5)
            seen.append("first")

    def second() -> None:
        with order.job():
            first_ticket.wait(5)
            ticket = order.take()
            assert ticket is not None
            order.wait_turn(ticket)  # until the first job has ended
            seen.append("second")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    threads[1].join(0.2)
    assert threads[1].is_alive()  # committed, but its turn has not come
    first_may_end.set()
    for thread in threads:
        thread.join(5)
    assert seen == ["first", "second"]


def test_a_failed_commit_gives_its_ticket_back() -> None:
    order = CommitOrder()
    with order.job():
        failed = order.take()
        assert failed is not None
        order.give_back(failed)
    done = threading.Event()

    def later() -> None:
        with order.job():
            ticket = order.take()
            assert ticket is not None
            order.wait_turn(ticket)
        done.set()

    thread = threading.Thread(target=later)
    thread.start()
    thread.join(5)
    assert done.is_set()


def test_a_second_write_in_a_job_ends_the_first_turn() -> None:
    order = CommitOrder()
    with order.job():
        one = order.take()
        assert one is not None
        order.wait_turn(one)
        order.end_turn()  # what the store's next write does first
        two = order.take()
        assert two is not None
        order.wait_turn(two)  # would wait forever had the first turn been kept


def test_outside_a_job_no_ticket_is_taken() -> None:
    assert CommitOrder().take() is None
