import { strict as assert } from 'node:assert';

import { codeMatches, eventFromFrame, firmwareErrorFromFrame, normaliseEvent, unwrapFrame } from '../../src/client/event-frames';

describe('client: event frames', function () {
  describe('unwrapFrame', function () {
    it('parses JSON inside JSON strings, several levels deep, in objects and arrays', function () {
      const inner = JSON.stringify({ ViewId: 'abc', Buttons: JSON.stringify(['Ok', 'Cancel']) });
      const frame = JSON.stringify(JSON.stringify({ Code: 'MessageBox', Description: 'Door', Data: JSON.stringify(inner) }));
      assert.deepEqual(unwrapFrame(frame), {
        code: 'MessageBox',
        description: 'Door',
        data: { viewId: 'abc', buttons: ['Ok', 'Cancel'] },
      });
    });

    it('keeps strings that are not JSON objects or arrays (numbers, words, broken JSON)', function () {
      const value = unwrapFrame(JSON.stringify({ a: '42', b: 'true', c: '{broken', d: 'plain text', e: '"quoted' }));
      assert.deepEqual(value, { a: '42', b: 'true', c: '{broken', d: 'plain text', e: '"quoted' });
    });

    it('reads a JSON string inside a string as its text (a value encoded once more on its own)', function () {
      const value = unwrapFrame(JSON.stringify({ e: '"quoted"', f: JSON.stringify(JSON.stringify('v-1')), g: '"42"' }));
      assert.deepEqual(value, { e: 'quoted', f: 'v-1', g: '42' });
    });

    it('returns a frame that is not JSON as its text, and accepts Buffers', function () {
      assert.equal(unwrapFrame('hello'), 'hello');
      assert.deepEqual(unwrapFrame(Buffer.from('{"x":"[1,2]"}')), { x: [1, 2] });
    });

    it('stops at a bounded depth instead of recursing forever', function () {
      let text = JSON.stringify({ deepest: true });
      for (let i = 0; i < 12; i++) text = JSON.stringify(text);
      assert.doesNotThrow(() => unwrapFrame(text));
    });
  });

  describe('normaliseEvent', function () {
    it('gives {code, description, data} with the code in lower case, from PascalCase or camelCase keys', function () {
      assert.deepEqual(normaliseEvent({ Code: 'Finished', Description: 'Run finished', Data: { RunId: 'r1' } }), {
        code: 'finished',
        description: 'Run finished',
        data: { RunId: 'r1' },
      });
      assert.deepEqual(eventFromFrame('{"code":"maintenanceData","description":"","data":"{\\"Step\\":3}"}'), {
        code: 'maintenancedata',
        description: '',
        data: { step: 3 },
      });
    });

    it('keeps the whole object as data when no data key exists, and code "" for shapeless frames', function () {
      assert.deepEqual(normaliseEvent({ code: 'x', value: 1 }), { code: 'x', description: '', data: { code: 'x', value: 1 } });
      assert.deepEqual(normaliseEvent('just text'), { code: '', description: 'just text', data: 'just text' });
    });

    it('matches codes case-insensitively; an empty filter matches all', function () {
      assert.equal(codeMatches('messagebox', ['MessageBox']), true);
      assert.equal(codeMatches('finished', ['messagebox']), false);
      assert.equal(codeMatches('anything', []), true);
    });
  });

  describe('firmwareErrorFromFrame', function () {
    it('turns an error frame into a record shaped like a pending A error', function () {
      const frame = JSON.stringify({
        Code: 'RuntimeError',
        Description: 'Pressure fault',
        Data: JSON.stringify({
          Id: 'e1',
          Title: 'Pressure fault',
          Message: 'Channel 1',
          Severity: 'fatal',
          ErrorResponses: JSON.stringify([{ Response: 'Retry' }, 'Abort']),
          GroupId: 'g1',
          Source: 'Firmware',
        }),
      });
      const result = firmwareErrorFromFrame(eventFromFrame(frame));
      assert.equal(result.kind, 'raised');
      if (result.kind !== 'raised') return;
      assert.equal(result.error.id, 'e1');
      assert.equal(result.error.title, 'Pressure fault');
      assert.equal(result.error.message, 'Channel 1');
      assert.equal(result.error.severity, 'Fatal');
      assert.deepEqual(result.error.errorResponses, [{ response: 'Retry' }, { response: 'Abort' }]);
      assert.equal(result.error.groupId, 'g1');
      assert.equal(result.error.source, 'firmware');
    });

    it('says "service" for an error the frame marks as also in the error list', function () {
      const r = firmwareErrorFromFrame({
        code: 'runtimeerror',
        description: '',
        data: { id: 'a', title: 't', source: 'Service' },
      });
      assert.equal(r.kind === 'raised' && r.error.source, 'service');
    });

    it('recognises a resolution by its code or by a resolved/handled flag', function () {
      assert.deepEqual(firmwareErrorFromFrame({ code: 'runtimeerrorresolved', description: '', data: { id: 'e1' } }), {
        kind: 'resolved',
        resolvedId: 'e1',
      });
      assert.deepEqual(firmwareErrorFromFrame({ code: 'error', description: '', data: { errorId: 7, handled: true } }), {
        kind: 'resolved',
        resolvedId: '7',
      });
    });

    it('gives an error without an id a stable id, the same for the same frame', function () {
      const event = { code: 'error', description: 'Clot', data: { message: 'Clot detected' } };
      const a = firmwareErrorFromFrame(event);
      const b = firmwareErrorFromFrame({ ...event, data: { message: 'Clot detected' } });
      assert.ok(a.kind === 'raised' && b.kind === 'raised');
      assert.match(a.error.id, /^fw-[0-9a-f]{16}$/);
      assert.equal(a.error.id, b.error.id);
      assert.equal(a.error.title, 'Clot');
    });

    it('reports frames it cannot read as unrecognised', function () {
      assert.equal(firmwareErrorFromFrame({ code: 'x', description: '', data: 'text' }).kind, 'unrecognised');
      assert.equal(firmwareErrorFromFrame({ code: 'resolved', description: '', data: {} }).kind, 'unrecognised');
      assert.equal(firmwareErrorFromFrame({ code: 'x', description: '', data: { foo: 1 } }).kind, 'unrecognised');
    });
  });
});
