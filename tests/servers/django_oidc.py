"""A second, independent OpenID provider for the upstream tests: django-oidc-provider (PyPI)
in a Django site of its own, on 127.0.0.1, its database in memory.

    python django_oidc.py PORT REDIRECT_URI

Issuer ``http://127.0.0.1:PORT/openid``. One confidential client, ``toolwire-upstream``
(secret ``django-secret``, the redirect URI given, ID tokens signed with RS256, no consent
page). One person, ``dora`` (password ``dora-password``): Dora Explorer,
dora@example.com, in the groups ``maps`` and ``backpack`` (the scope ``groups``). People
sign in at ``/accounts/login/`` (Django's own login form). Prints "ready" once it listens.
"""

import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

import django
from django.conf import settings

PORT, REDIRECT_URI = int(sys.argv[1]), sys.argv[2]
LOGIN_PAGE = "<form method='post'>{% csrf_token %}{{ form.as_p }}<button>Sign in</button></form>"

settings.configure(
    DEBUG=False,
    SECRET_KEY="tests-only-secret-key-for-a-local-provider",
    ALLOWED_HOSTS=["127.0.0.1"],
    ROOT_URLCONF=__name__,
    SITE_URL=f"http://127.0.0.1:{PORT}",
    LOGIN_URL="/accounts/login/",
    INSTALLED_APPS=[
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "django.contrib.sessions",
        "oidc_provider",
    ],
    MIDDLEWARE=[
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    TEMPLATES=[
        {
            "BACKEND": "django.template.backends.django.DjangoTemplates",
            "OPTIONS": {
                "context_processors": ["django.template.context_processors.request"],
                "loaders": [
                    ("django.template.loaders.locmem.Loader", {"registration/login.html": LOGIN_PAGE}),
                    "django.template.loaders.app_directories.Loader",
                ],
            },
        }
    ],
    OIDC_USERINFO=f"{__name__}.userinfo",
    OIDC_EXTRA_SCOPE_CLAIMS=f"{__name__}.GroupClaims",
    USE_TZ=True,
)
django.setup()

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.contrib.auth.views import LoginView  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import include, path  # noqa: E402
from oidc_provider.lib.claims import ScopeClaims  # noqa: E402
from oidc_provider.models import Client, ResponseType, RSAKey  # noqa: E402

urlpatterns = [
    path("accounts/login/", LoginView.as_view()),
    path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
]


def userinfo(claims: dict, user: User) -> dict:
    claims.update(name=user.get_full_name(), email=user.email, email_verified=True)
    return claims


class GroupClaims(ScopeClaims):
    info_groups = ("Groups", "The groups you are in.")

    def scope_groups(self) -> dict:
        return {"groups": sorted(group.name for group in self.user.groups.all())}


def prepare() -> None:
    call_command("migrate", verbosity=0)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    RSAKey.objects.create(key=pem.decode())
    dora = User.objects.create_user(
        "dora", "dora@example.com", "dora-password", first_name="Dora", last_name="Explorer"
    )
    for name in ("maps", "backpack"):
        dora.groups.add(Group.objects.create(name=name))
    client = Client.objects.create(
        name="toolwire",
        client_type="confidential",
        client_id="toolwire-upstream",
        client_secret="django-secret",
        jwt_alg="RS256",
        require_consent=False,
    )
    client.redirect_uris = [REDIRECT_URI]
    client.save()
    client.response_types.add(ResponseType.objects.get(value="code"))


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    prepare()
    server = make_server("127.0.0.1", PORT, get_wsgi_application(), handler_class=QuietHandler)
    print("ready", flush=True)
    server.serve_forever()
