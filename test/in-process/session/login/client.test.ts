/**
 * Which OAuth client a login acts as (planClient), branch by branch in-process: testContext against the reference
 * platform's real metadata, instead of a spawned login per branch. What the plan leads to at the server (a
 * registration reused, an integration accepted) is the spawned tests' business (test/cli/login/).
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../../src/errors.js';
import type { Discovery } from '../../../../src/oauth/discovery.js';
import { getDiscovery } from '../../../../src/session/discovery/discovery-cache.js';
import { planClient } from '../../../../src/session/login/client.js';
import type { ClientChoice } from '../../../../src/session/login/options.js';
import type { ClientRegistration, Profile } from '../../../../src/store/types.js';
import { useTestContexts } from '../../../helpers/context.js';
import { useHome, usePlatform } from '../../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

const registration = (extra: Partial<ClientRegistration>): ClientRegistration => ({
  clientId: 'client-1',
  authMethod: 'none',
  issuer: platform.issuer,
  redirectUris: ['http://127.0.0.1:50123/callback'],
  dynamic: true,
  registeredAt: 0,
  ...extra,
});

const auto: ClientChoice = { kind: 'auto' };
const registered = (clientId: string, secretOnStdin = false): ClientChoice => ({ kind: 'registered', clientId, secretOnStdin });

/** The plan, and the context it ran on (its captured stderr holds any note). */
async function planned(stored: ClientRegistration | undefined, choice: ClientChoice = auto, given: { secret?: string; metadataUrl?: string } = {}) {
  const t = open();
  const profile: Profile = { name: 'default', baseUrl: platform.baseUrl, client: stored };
  const discovery: Discovery = await getDiscovery(t.ctx, platform.baseUrl);
  return { plan: await planClient(t.ctx, profile, stored, discovery, choice, given), t };
}

const plan = async (...args: Parameters<typeof planned>) => (await planned(...args)).plan;

describe('planClient', () => {
  it('nothing stored and no flags: plat registers itself', async () => {
    expect(await plan(undefined)).toEqual({});
  });

  it('a registration plat made at this issuer is reused as it is', async () => {
    const stored = registration({});
    expect(await plan(stored)).toEqual({ stored });
  });

  it('--client-id names a pre-registered client; with a secret on stdin it is confidential', async () => {
    expect(await plan(undefined, registered('app'))).toEqual({ known: { clientId: 'app', port: undefined } });
    expect(await plan(undefined, registered('app', true), { secret: 's3cret' })).toEqual({ known: { clientId: 'app', secret: 's3cret', port: undefined } });
  });

  it('a pre-registered client the profile remembers is used again on the port it used last', async () => {
    const stored = registration({ clientId: 'app', dynamic: false });
    expect(await plan(stored)).toEqual({ known: { clientId: 'app', port: 50123 } });
    expect(await plan(stored, registered('app'))).toEqual({ known: { clientId: 'app', port: 50123 } });
    expect(await plan(stored, registered('other-app'))).toEqual({ known: { clientId: 'other-app', port: undefined } });
  });

  it('a confidential integration whose secret went with the last logout: a usage error saying how to pass it again', async () => {
    const stored = registration({ clientId: 'integration', dynamic: false, authMethod: 'client_secret_post' });
    const planned = plan(stored);
    await expect(planned).rejects.toBeInstanceOf(UsageError);
    await expect(planned).rejects.toThrow(
      'Profile default signs in with the confidential integration integration, and its secret went with the last logout. Pass it again: plat login --client-id integration --client-secret-stdin < secret-file',
    );
  });

  it('--client-metadata-url where the server does not resolve URL client IDs: a usage error naming the issuer', async () => {
    await expect(plan(undefined, { kind: 'metadata-document', url: 'https://app.example/plat/client.json' }, { metadataUrl: 'https://app.example/plat/client.json' })).rejects.toThrow(
      `The authorization server ${platform.issuer} does not support client ID metadata documents`,
    );
  });

  it('--client-metadata-url where the server does: the document\'s URL is the client ID', async () => {
    platform.knobs.clientIdMetadataDocuments = true;
    const url = 'https://app.example/plat/client.json';
    expect(await plan(undefined, { kind: 'metadata-document', url: 'https://app.example/plat/client.json' }, { metadataUrl: url })).toEqual({ known: { clientId: url, port: undefined } });
  });

  it('a remembered metadata-document client at a server that stopped supporting them: a note, and plat registers itself', async () => {
    const stored = registration({ clientId: 'https://app.example/plat/client.json', dynamic: false });
    const { plan: result, t } = await planned(stored);
    expect(result).toEqual({});
    expect(t.stderr()).toContain('The server no longer supports client ID metadata documents, so plat cannot use https://app.example/plat/client.json; registering itself instead.');
  });
});
