"""Type stubs for phobos.tandem: Tandem keys and their derivations."""

from typing import Tuple

PURPOSE_USER: int
PURPOSE_BELOW: int
PURPOSE_NORMAL64: int

class Key:
    """A 128-bit Tandem key. `Key(seed)` is the key of a u64 seed."""

    def __init__(self, seed: int) -> None: ...
    @staticmethod
    def from_words(words: Tuple[int, int, int, int]) -> "Key": ...
    def sub(self, purpose: int) -> "Key":
        """An independent key for a purpose (user code: PURPOSE_USER + n)."""
    def split(self, g: int) -> "Key":
        """The g-th independent child key."""
    @property
    def words(self) -> Tuple[int, int, int, int]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
