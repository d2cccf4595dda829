#!/usr/bin/env python3
"""An OpenID Connect provider built with Authlib (Debian's python3-authlib + python3-flask), set up the way
Authlib's documentation sets up its Flask OpenID Connect example server: authorization code with PKCE and nonce,
rotating refresh tokens, revocation (RFC 7009), dynamic registration (RFC 7591), UserInfo, a protected API checked
by Authlib's own bearer-token validator. Everything lives in memory; plat's interop tests start it on 127.0.0.1.

Deliberately unlike the platform's documented layout: the issuer has a path (/idp/authlib), every endpoint has a
path of its own, and the pre-registered confidential client authenticates with client_secret_basic only.

Usage: server.py '<json options>'; prints one JSON line {"port": N} on stdout when it is listening.
Options: revocationForPublicClients (bool, default true); listedRevocationMethods (the metadata's
revocation_endpoint_auth_methods_supported, when it should differ from what the endpoint accepts);
confidentialRedirectUri (the pre-registered confidential client's one redirect URI).
"""
import json
import os
import secrets
import sys
import threading
import time

from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector, current_token
from authlib.jose import JsonWebKey
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, TokenMixin, grants
from authlib.oauth2.rfc6749.util import list_to_scope, scope_to_list
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, jsonify, redirect, request, session
from markupsafe import escape
from werkzeug.serving import make_server

# Authlib refuses plain http unless told this is a local test setup (its documentation's switch for development).
os.environ['AUTHLIB_INSECURE_TRANSPORT'] = '1'
OPTIONS = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
PUBLIC_REVOCATION = OPTIONS.get('revocationForPublicClients', True)
PREFIX = '/idp/authlib'
API_SCOPES = ['courses:read', 'courses:write', 'students:read']
SCOPES = ['openid', 'profile', 'email'] + API_SCOPES
USER = {'sub': 'user-grace', 'name': 'Grace Hopper', 'preferred_username': 'grace', 'email': 'grace@example.test',
        'email_verified': True}
PASSWORD = 'correct horse'
CONFIDENTIAL = {'id': 'plat-basic-integration', 'secret': secrets.token_urlsafe(24)}
LOCK = threading.Lock()
KEY = JsonWebKey.generate_key('RSA', 2048, is_private=True)
KEY_ID = secrets.token_hex(8)

# --- models: the in-memory equivalents of the example's SQLAlchemy mixins -----------------------------------


class Client(ClientMixin):
    def __init__(self, client_id, client_secret, metadata):
        self.client_id = client_id
        self.client_secret = client_secret
        self.metadata = metadata

    @property
    def token_endpoint_auth_method(self):
        return self.metadata.get('token_endpoint_auth_method', 'client_secret_basic')

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return (self.metadata.get('redirect_uris') or [None])[0]

    def get_allowed_scope(self, scope):
        # RFC 7591 §2: a client asks only for the scopes it registered (none registered: none allowed).
        allowed = set(scope_to_list(self.metadata.get('scope', '')))
        return list_to_scope([s for s in scope_to_list(scope or '') if s in allowed])

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.metadata.get('redirect_uris', [])

    def check_client_secret(self, client_secret):
        return bool(self.client_secret) and secrets.compare_digest(self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        return self.token_endpoint_auth_method == method

    def check_response_type(self, response_type):
        return response_type in self.metadata.get('response_types', ['code'])

    def check_grant_type(self, grant_type):
        return grant_type in self.metadata.get('grant_types', ['authorization_code'])


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, **fields):
        self.__dict__.update(fields)
        self.auth_time = int(time.time())

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time


class Token(TokenMixin):
    def __init__(self, client_id, user, fields):
        self.client_id = client_id
        self.user = user
        self.access_token = fields['access_token']
        self.refresh_token = fields.get('refresh_token')
        self.scope = fields.get('scope', '')
        self.expires_in = fields.get('expires_in', 3600)
        self.issued_at = int(time.time())
        self.access_revoked = False
        self.refresh_revoked = False

    def check_client(self, client):
        return self.client_id == client.get_client_id()

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.access_revoked

    def is_refresh_token_valid(self):
        return self.refresh_token is not None and not self.refresh_revoked


CLIENTS = {}
CODES = {}
TOKENS = []
REGISTRATIONS = []
CLIENTS[CONFIDENTIAL['id']] = Client(CONFIDENTIAL['id'], CONFIDENTIAL['secret'], {
    'client_name': 'plat integration (client_secret_basic)',
    # Registered exactly, as Authlib compares it: the test picks a free loopback port it owns and names it here.
    'redirect_uris': [OPTIONS['confidentialRedirectUri']] if 'confidentialRedirectUri' in OPTIONS else [],
    'grant_types': ['authorization_code', 'refresh_token'],
    'response_types': ['code'],
    'scope': ' '.join(SCOPES),
    'token_endpoint_auth_method': 'client_secret_basic',
})

# --- the authorization server ----------------------------------------------------------------------------------

app = Flask(__name__)
app.secret_key = secrets.token_bytes(32)
app.config['OAUTH2_TOKEN_EXPIRES_IN'] = {'authorization_code': 3600, 'refresh_token': 3600}
app.config['OAUTH2_REFRESH_TOKEN_GENERATOR'] = True


def issuer():
    return f'{request.host_url.rstrip("/")}{PREFIX}'


def query_client(client_id):
    return CLIENTS.get(client_id)


def save_token(token, req):
    with LOCK:
        TOKENS.append(Token(req.client.get_client_id(), req.user, token))


server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
AUTH_METHODS = ['client_secret_basic', 'none']


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def save_authorization_code(self, code, req):
        CODES[code] = AuthorizationCode(
            code=code, client_id=req.client.get_client_id(), redirect_uri=req.redirect_uri, scope=req.scope,
            user=req.user, nonce=req.data.get('nonce'), code_challenge=req.data.get('code_challenge'),
            code_challenge_method=req.data.get('code_challenge_method'))

    def query_authorization_code(self, code, client):
        found = CODES.get(code)
        return found if found and found.client_id == client.get_client_id() else None

    def delete_authorization_code(self, authorization_code):
        CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


def jwt_config():
    return {'key': KEY.as_dict(is_private=True, kid=KEY_ID), 'alg': 'RS256', 'iss': issuer(), 'exp': 3600}


def user_info(user, scope):
    info = UserInfo(sub=user['sub'])
    if 'profile' in scope:
        info.update(name=user['name'], preferred_username=user['preferred_username'])
    if 'email' in scope:
        info.update(email=user['email'], email_verified=user['email_verified'])
    return info


class OpenIDCodeExtension(OpenIDCode):
    def exists_nonce(self, nonce, req):
        return any(code.nonce == nonce and code.client_id == req.client_id for code in CODES.values())

    def get_jwt_config(self, grant):
        return jwt_config()

    def generate_user_info(self, user, scope):
        return user_info(user, scope)


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation

    def authenticate_refresh_token(self, refresh_token):
        for token in TOKENS:
            if token.refresh_token == refresh_token and token.is_refresh_token_valid():
                return token
        return None

    def authenticate_user(self, credential):
        return credential.user

    def revoke_old_credential(self, credential):
        credential.refresh_revoked = True
        credential.access_revoked = True


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS if PUBLIC_REVOCATION else ['client_secret_basic']

    def query_token(self, token_string, token_type_hint):
        for token in TOKENS:
            if token_string in (token.access_token, token.refresh_token):
                return token
        return None

    def revoke_token(self, token, req):
        # As the example does: the token record goes as a whole (access and refresh token together).
        token.access_revoked = True
        token.refresh_revoked = True


class Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, req):
        return True  # open registration, as RFC 7591 allows

    def get_server_metadata(self):
        return metadata()

    def resolve_public_key(self, req):
        return None

    def save_client(self, client_info, client_metadata, req):
        method = client_metadata.get('token_endpoint_auth_method', 'client_secret_basic')
        secret = client_info['client_secret'] if method != 'none' else None
        client = Client(client_info['client_id'], secret, client_metadata)
        CLIENTS[client.client_id] = client
        REGISTRATIONS.append({'client_id': client.client_id, 'metadata': client_metadata})
        return client


server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True), OpenIDCodeExtension(require_nonce=False)])
server.register_grant(RefreshTokenGrant)
server.register_endpoint(Revocation)
server.register_endpoint(Registration)


class Validator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        for token in TOKENS:
            if token.access_token == token_string:
                return token
        return None


require_oauth = ResourceProtector()
require_oauth.register_token_validator(Validator())


def metadata():
    base = issuer()
    return {
        'issuer': base,
        'authorization_endpoint': f'{base}/consent/authorize',
        'token_endpoint': f'{base}/tokens/issue',
        'revocation_endpoint': f'{base}/tokens/revoke',
        'registration_endpoint': f'{base}/clients',
        'userinfo_endpoint': f'{base}/me',
        'jwks_uri': f'{base}/keys',
        'scopes_supported': SCOPES,
        'response_types_supported': ['code'],
        'grant_types_supported': ['authorization_code', 'refresh_token'],
        'code_challenge_methods_supported': ['S256'],
        'token_endpoint_auth_methods_supported': AUTH_METHODS,
        'revocation_endpoint_auth_methods_supported': OPTIONS.get('listedRevocationMethods', Revocation.CLIENT_AUTH_METHODS),
        'subject_types_supported': ['public'],
        'id_token_signing_alg_values_supported': ['RS256'],
        'claims_supported': ['sub', 'name', 'preferred_username', 'email', 'email_verified'],
    }


@app.get('/.well-known/oauth-protected-resource')
def protected_resource():
    origin = request.host_url.rstrip('/')
    return jsonify(resource=origin, authorization_servers=[issuer()], scopes_supported=SCOPES,
                   bearer_methods_supported=['header'])


@app.get(f'/.well-known/oauth-authorization-server{PREFIX}')
@app.get(f'{PREFIX}/.well-known/openid-configuration')
def server_metadata():
    return jsonify(metadata())


@app.get(f'{PREFIX}/keys')
def keys():
    return jsonify(keys=[KEY.as_dict(is_private=False, kid=KEY_ID, alg='RS256', use='sig')])


@app.route(f'{PREFIX}/consent/authorize', methods=['GET', 'POST'])
def authorize():
    # The example's page: sign in first (a session cookie), then confirm the client's request.
    if request.method == 'POST' and 'username' in request.form:
        if request.form.get('username') != USER['preferred_username'] or request.form.get('password') != PASSWORD:
            return 'Wrong user name or password', 403
        session['user'] = USER['sub']
        return redirect(request.url)
    if session.get('user') != USER['sub']:
        return ('<!doctype html><title>Sign in</title><form method="post">'
                '<input name="username"><input name="password" type="password">'
                '<button type="submit">Sign in</button></form>')
    if request.method == 'GET':
        try:
            grant = server.get_consent_grant(end_user=USER)
        except Exception as error:  # the example shows the OAuth error to the person
            return f'<!doctype html><title>Error</title><p id="error">{escape(str(error))}</p>', 400
        return (f'<!doctype html><title>Authorize</title><p>{escape(grant.client.metadata.get("client_name", ""))} '
                f'asks for {escape(grant.request.scope or "")}</p><form method="post">'
                '<input type="checkbox" name="confirm" value="yes" checked><button type="submit">Approve</button></form>')
    return server.create_authorization_response(grant_user=USER if request.form.get('confirm') == 'yes' else None)


@app.post(f'{PREFIX}/tokens/issue')
def issue_token():
    return server.create_token_response()


@app.post(f'{PREFIX}/tokens/revoke')
def revoke_token():
    return server.create_endpoint_response('revocation')


@app.post(f'{PREFIX}/clients')
def register_client():
    return server.create_endpoint_response('client_registration')


@app.route(f'{PREFIX}/me', methods=['GET', 'POST'])
@require_oauth('openid')
def userinfo():
    return jsonify(user_info(current_token.user, current_token.scope))


@app.get('/v1/courses')
@require_oauth('courses:read')
def courses():
    return jsonify(items=[{'id': 'c-1', 'title': 'Compilers'}], user=current_token.user['sub'])


@app.get('/_test/state')
def state():
    """The server's own records, for the tests' assertions (not part of any protocol)."""
    return jsonify(
        registrations=REGISTRATIONS,
        confidential=CONFIDENTIAL,
        tokens=[{'client_id': t.client_id, 'access_token': t.access_token, 'refresh_token': t.refresh_token,
                 'scope': t.scope, 'access_revoked': t.access_revoked, 'refresh_revoked': t.refresh_revoked}
                for t in TOKENS],
    )


def exit_with_parent():
    # The test holds this process's stdin open: end-of-file means the test runner is gone, so stop too.
    sys.stdin.read()
    os._exit(0)


if __name__ == '__main__':
    threading.Thread(target=exit_with_parent, daemon=True).start()
    http = make_server('127.0.0.1', 0, app, threaded=True)
    print(json.dumps({'port': http.server_port}), flush=True)
    http.serve_forever()
