"""The downloads page tells readers how to check the published figures themselves: the
manifest's signature beside it, the signing key, the command and the manual's section,
in English and Korean."""

import pytest

from mica.exports.publish import exports_build_and_publish

# Publishing appends to the publication log, which locks its table on PostgreSQL.
pytestmark = [pytest.mark.django_db, pytest.mark.vendor]


@pytest.fixture(autouse=True)
def signing_key_file(settings, tmp_path):
    """This test's own embedded key, made on first use."""
    settings.SIGNING_KEY = ""
    settings.SIGNING_KEY_FILE = tmp_path / "var" / "signing_key"


def test_the_downloads_page_tells_readers_how_to_run_the_verifier(
    client, canonical_content, export_dir, settings
):
    exports_build_and_publish()
    command = f"python -m mica_verify {settings.SITE_URL}/"
    for prefix, heading, manual in [
        ("", "Checking the figures yourself", "/docs/reference/exports/"),
        ("/ko", "수치를 직접 확인하기", "/docs/ko/reference/exports/"),
    ]:
        page = client.get(f"{prefix}/downloads/")
        assert page.status_code == 200
        text = page.text
        assert f'<h2 id="checking-the-figures-yourself">{heading}</h2>' in text
        assert f'href="{prefix}/downloads/manifest.json.sig"' in text
        assert f'href="{prefix}/transparency/key"' in text
        assert f"<code>{command}</code>" in text
        assert f'href="{manual}#checking-the-figures-yourself"' in text
    korean = client.get("/ko/downloads/").text
    assert "게시하기 전에 똑같이 다시 계산" in korean and "포털의 코드 없이" in korean
    # What the pages link is served: the signature beside the manifest, and the key.
    for prefix in ["", "/ko"]:
        signature = client.get(f"{prefix}/downloads/manifest.json.sig")
        assert signature.status_code == 200 and signature["Content-Type"].startswith("text/")
        assert client.get(f"{prefix}/transparency/key").status_code == 200
