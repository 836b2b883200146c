"""The log view follows new lines while its reader is at the end, and stays where the reader
scrolled to otherwise (a deploy writes many batches a second)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from npa_sop_tui.tui.widgets.log_view import LogView


class LogApp(App[None]):
    def __init__(self, early: int = 0) -> None:
        super().__init__()
        self.early = early

    def compose(self) -> ComposeResult:
        view = LogView(id="log")
        view.write(_batch(0, self.early))  # written before the view has a size
        yield view


def _batch(start: int, count: int = 5) -> list[tuple[str, str]]:
    return [("info", f"line {i}") for i in range(start, start + count)]


async def test_lines_written_before_the_first_layout_are_shown_at_their_end() -> None:
    app = LogApp(early=30)
    async with app.run_test(size=(40, 8)) as pilot:
        view = app.query_one(LogView)
        await pilot.pause()
        await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.scroll_y == view.max_scroll_y
        view.write(_batch(30))
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y


async def test_batches_in_one_frame_keep_the_view_at_its_end() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 8)) as pilot:
        view = app.query_one(LogView)
        await pilot.pause()
        # three batches before any refresh: the first one's scroll to the end is still
        # pending when the next arrives
        for start in (0, 5, 10):
            view.write(_batch(start))
        await pilot.pause()
        await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.scroll_y == view.max_scroll_y


async def test_a_reader_who_scrolled_up_stays_there_until_back_at_the_end() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 8)) as pilot:
        view = app.query_one(LogView)
        await pilot.pause()
        view.write(_batch(0, 30))
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        view.scroll_to(y=3, animate=False)
        await pilot.pause()
        view.write(_batch(30))
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == 3  # reading older lines: new ones do not pull the view away
        view.scroll_end(animate=False)
        await pilot.pause()
        view.write(_batch(35))
        await pilot.pause()
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
