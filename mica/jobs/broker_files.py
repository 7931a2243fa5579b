"""The embedded profile's broker of files (var/broker), with messages that appear whole.

kombu's filesystem transport opens a message's file under its final name and then
writes it, so a worker listing the folder in between takes an empty or half-written
file, fails to decode it and dies (celery/kombu#1551); under load the embedded `make run`
lost its worker that way. Here a message is written under a name no reader takes (a dot
first: kombu matches `<...>.<queue>.msg` after the first dot), flushed, then renamed into
place, which on one file system is atomic: a reader sees no file or the whole one.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# The broker URL's scheme (settings.CELERY_BROKER_URL) in every process of the machine:
# the web processes that queue and the worker that takes.
SCHEME = "mica-files"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as stream:
                stream.write(str_to_bytes(dumps(payload)))
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def broker_files_register():
    TRANSPORT_ALIASES.setdefault(SCHEME, f"{__name__}:Transport")
