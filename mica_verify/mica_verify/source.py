"""Where the checked files come from: a site's base URL, or a folder `--download` filled.

A folder holds the export set as /downloads/ serves it (manifest.json, its signature
manifest.json.sig and every file the manifest lists), with the publication log as
log.json and the site's public key as key.pem.
"""

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"
LOG = "log.json"
KEY = "key.pem"
TIMEOUT_SECONDS = 60
# Where a site serves each file that is not an export file of /downloads/.
SITE_PATHS = {LOG: "/transparency/log.json", KEY: "/transparency/key"}


class Missing(Exception):
    """A file the check needs is not in the source."""

    def __init__(self, name, why):
        super().__init__(f"{name}: {why}")
        self.name = name


def site_path(name):
    return SITE_PATHS.get(name, "/downloads/" + urllib.parse.quote(name))


class Folder:
    def __init__(self, path):
        self.path = Path(path)
        self.where = str(self.path)

    def read(self, name):
        path = self.path / name
        # A name from the manifest must not reach outside the folder.
        if Path(name).name != name or not path.is_file():
            raise Missing(name, f"not in {self.path}")
        return path.read_bytes()


class Site:
    def __init__(self, url):
        self.url = url.rstrip("/")
        self.where = self.url

    def read(self, name):
        request = urllib.request.Request(
            self.url + site_path(name), headers={"User-Agent": "mica-verify"}
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            raise Missing(name, f"{self.url}{site_path(name)} answered {error.code}") from error
        except (urllib.error.URLError, OSError) as error:
            raise Missing(name, f"{self.url}{site_path(name)} unreachable: {error}") from error


def source_open(where):
    if where.startswith(("http://", "https://")):
        return Site(where)
    return Folder(where)


class Cached:
    """Each file read once, whoever asks: the manifest check and the recomputation read
    the same bytes, so a figure is never recomputed from bytes other than those checked."""

    def __init__(self, source):
        self.source = source
        self.where = source.where
        self.files = {}

    def read(self, name):
        if name not in self.files:
            self.files[name] = self.source.read(name)
        return self.files[name]

    def json(self, name):
        return json.loads(self.read(name).decode("utf-8"))


def download(url, folder):
    """Copy everything the check reads from the site at `url` into `folder`; return the
    names written. Files are kept as served, byte for byte."""
    site = Site(url)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest_bytes = site.read(MANIFEST)
    names = [entry["name"] for entry in json.loads(manifest_bytes)["files"]]
    written = {MANIFEST: manifest_bytes}
    for name in [SIGNATURE, LOG, KEY, *names]:
        if Path(name).name != name:
            raise Missing(name, "the manifest names a file outside its folder")
        written[name] = site.read(name)
    for name, data in written.items():
        (folder / name).write_bytes(data)
    return sorted(written)
