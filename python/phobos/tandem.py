"""Tandem keys: `Key(seed)` is the key of a u64 seed (the one `phobosc fill
--key SEED` and the kernels' `tandem_*(seed, i)` use); `key.sub(purpose)`
and `key.split(g)` derive independent keys, as stdlib/tandem/SPEC.md
specifies. Purposes below `PURPOSE_USER` are the library's own.
"""

from ._phobos import PURPOSE_BELOW, PURPOSE_NORMAL64, PURPOSE_USER, Key

__all__ = ["Key", "PURPOSE_USER", "PURPOSE_BELOW", "PURPOSE_NORMAL64"]
