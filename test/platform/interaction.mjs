// The consent page behind oidc-provider's interactions: GET renders it, POST finishes the interaction.
// The demo user is signed in implicitly, so one Approve completes both the login and the consent prompts.

import { API_SCOPES, describeScope } from './scopes.mjs';
import { DEMO_USER, errorPage, escapeHtml } from './provider.mjs';

const FORM_LIMIT = 16 * 1024;

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {Promise<string>}
 */
async function readSmallBody(req) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > FORM_LIMIT) throw new Error('form too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} html
 */
function sendHtml(res, status, html) {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

/**
 * @param {{ uid: string, clientName: string, clientId: string, scopes: string[] }} view
 */
function consentPage({ uid, clientName, clientId, scopes }) {
  const items = scopes
    .map((s) => `<li><code>${escapeHtml(s)}</code> — ${escapeHtml(describeScope(s))}</li>`)
    .join('\n        ');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Authorize ${escapeHtml(clientName)}</title>
  <style>
    body { font-family: system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; color: #222; }
    .card { border: 1px solid #ccc; border-radius: 8px; padding: 1.5rem 2rem; }
    button { font-size: 1rem; padding: .5rem 1.5rem; margin-right: .5rem; cursor: pointer; }
    #approve { background: #2563eb; color: #fff; border: 0; border-radius: 4px; }
    #deny { background: #eee; border: 1px solid #bbb; border-radius: 4px; }
    code { background: #f3f3f3; padding: 0 .25rem; }
  </style>
</head>
<body>
  <div class="card">
    <h1>Authorize <span id="client-name">${escapeHtml(clientName)}</span></h1>
    <p>Signed in as <strong>${escapeHtml(DEMO_USER.name)}</strong> (${escapeHtml(DEMO_USER.email)}).</p>
    <p><strong>${escapeHtml(clientName)}</strong> <small>(${escapeHtml(clientId)})</small> is asking for access to:</p>
    <ul id="scopes">
        ${items || '<li>no scopes</li>'}
    </ul>
    <form method="post" action="/interaction/${escapeHtml(uid)}">
      <button type="submit" id="approve" name="decision" value="approve">Approve</button>
      <button type="submit" id="deny" name="decision" value="deny">Deny</button>
    </form>
  </div>
</body>
</html>
`;
}

/**
 * @param {unknown} resource
 * @returns {string[]}
 */
function resourcesOf(resource) {
  if (Array.isArray(resource)) return resource.filter((r) => typeof r === 'string');
  return typeof resource === 'string' ? [resource] : [];
}

/**
 * Answers /interaction/:uid. Returns false when the path is not an interaction path.
 * @param {import('./provider.mjs').OidcProvider} provider
 * @param {import('./index.mjs').Knobs} knobs
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {URL} url
 */
export async function handleInteraction(provider, knobs, req, res, url) {
  const match = /^\/interaction\/([^/]+)$/.exec(url.pathname);
  if (!match) return false;

  try {
    const details = await provider.interactionDetails(req, res);
    const { uid, params } = details;
    const clientId = String(params.client_id);
    const requested = String(params.scope ?? '').split(' ').filter(Boolean);

    if (req.method === 'GET' || req.method === 'HEAD') {
      const client = await provider.Client.find(clientId);
      sendHtml(res, 200, consentPage({ uid, clientId, clientName: client?.clientName ?? clientId, scopes: requested }));
      return true;
    }

    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST' }).end();
      return true;
    }

    const decision = new URLSearchParams(await readSmallBody(req)).get('decision');
    if (decision !== 'approve') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User denied the authorization request' },
        { mergeWithLastSubmission: false },
      );
      return true;
    }

    const granted = knobs.grantScopes ? knobs.grantScopes([...requested]) : requested;
    const grant = new provider.Grant({ accountId: DEMO_USER.sub, clientId });
    if (granted.length) grant.addOIDCScope(granted.join(' '));
    const rejected = requested.filter((s) => !granted.includes(s));
    if (rejected.length) grant.rejectOIDCScope(rejected.join(' '));
    for (const resource of resourcesOf(params.resource)) {
      const apiScopes = granted.filter((s) => API_SCOPES.includes(s));
      if (apiScopes.length) grant.addResourceScope(resource, apiScopes.join(' '));
      // Scopes the user did not grant are refused for the resource too, or oidc-provider would ask for them again.
      const refusedApiScopes = rejected.filter((s) => API_SCOPES.includes(s));
      if (refusedApiScopes.length) grant.rejectResourceScope(resource, refusedApiScopes.join(' '));
    }
    const grantId = await grant.save();

    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: DEMO_USER.sub }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    return true;
  } catch (err) {
    const e = /** @type {{ error?: string, error_description?: string, message?: string }} */ (err);
    if (!res.headersSent) {
      sendHtml(res, 400, errorPage({ error: e.error ?? 'invalid_request', error_description: e.error_description ?? e.message ?? 'interaction failed' }));
    } else {
      res.destroy();
    }
    return true;
  }
}
