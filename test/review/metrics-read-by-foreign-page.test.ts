/**
 * README "Security": the package's editor endpoints, without adminAuth, "refuse every request from another site
 * (403)". `GET /lh/metrics` is one (an httpAdmin route), yet it had no cross-site check: the editor app answers every
 * origin (`Access-Control-Allow-Origin: *`), so any web page the user visited could read the lab's instrument names,
 * error counts and lease holders. Scrapers (no browser headers) must still pass, by whatever host name they scrape.
 */
import assert from 'node:assert/strict';

import { useInstrument } from '../support/node-suite';
import { helper, loadFlow, serverFlow } from '../support/runtime';

interface Reply {
  status: number;
  text: string;
}

describe('metrics page: foreign pages refused, scrapers served (adminAuth off)', function () {
  const sim = useInstrument({ adminServer: true });

  async function metrics(headers: Record<string, string>): Promise<Reply> {
    let req = helper.request().get('/lh/metrics');
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return (await req) as unknown as Reply;
  }

  beforeEach(async function () {
    const server = serverFlow(sim);
    await loadFlow(server.nodes, server.credentials);
  });

  it('refuses a read from another site (Sec-Fetch-Site, or a foreign Origin)', async function () {
    const bySite = await metrics({ Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' });
    assert.equal(bySite.status, 403, bySite.text);
    assert.doesNotMatch(bySite.text, /lh_/);
    const byOrigin = await metrics({ Host: '127.0.0.1:1880', Origin: 'http://evil.example' });
    assert.equal(byOrigin.status, 403, byOrigin.text);
  });

  it('refuses a browser page that rebinds its own name to this Node-RED', async function () {
    const res = await metrics({
      Host: 'rebind.attacker.example:1880',
      Origin: 'http://rebind.attacker.example:1880',
      'Sec-Fetch-Site': 'same-origin',
    });
    assert.equal(res.status, 403, res.text);
  });

  it('serves a scraper (no browser headers) by any host name, and the editor opened in a browser', async function () {
    const scrape = await metrics({ Host: 'nodered.lab:1880' });
    assert.equal(scrape.status, 200, scrape.text);
    assert.match(scrape.text, /lh_instrument_up/);
    const typed = await metrics({ Host: '127.0.0.1:1880', 'Sec-Fetch-Site': 'none' });
    assert.equal(typed.status, 200, typed.text);
  });
});
