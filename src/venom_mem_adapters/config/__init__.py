"""config.zon on disk, and the store URL's rules.

Modules, private to the package: ``_file`` (reading, checking and writing config.zon: the
launch view the CLI reads, the whole file the daemon loads), ``_path`` (where it is, and
whether there is one), ``_zon`` (the ZON text format) and ``_store_url`` (``store.url``
without secrets, and its key). Each name is imported when first used: the CLI reads the
launch view without cattrs (docs/adr/0035), and the client asks ``url_key``, or whether
there is a file at all, without loading the file's modules.
"""

from __future__ import annotations

from venom_mem_core.exports import lazy_exports

TYPE_CHECKING = False  # typing costs the --json path milliseconds; mypy still sees it
if TYPE_CHECKING:
    from ._file import default_config_path as default_config_path
    from ._file import load_config as load_config
    from ._file import load_launch_config as load_launch_config
    from ._file import parse_value_text as parse_value_text
    from ._file import write_config_value as write_config_value
    from ._path import config_file_path as config_file_path
    from ._path import config_file_present as config_file_present
    from ._store_url import check_url as check_url
    from ._store_url import public_url as public_url
    from ._store_url import url_key as url_key

__getattr__, __dir__ = lazy_exports(__name__, __file__)  # the names: the typed imports above
