/**
 * Review finding (lh-state's dialog): *Again every (s)* says "0, or a number of seconds from 1 to 86400" (the locale's
 * error text), but the dialog had no rule for it: `-5`, `abc` or `0.5` were deployed without a mark. The runtime then
 * quietly made `-5` into 0 (the document never sent again: a broker restarted without its retained msgs never gets it
 * back, and no MQTT 5 expiry) and `abc` into 60. The field is now checked as its text says, as *At most / s* and
 * *Door every (s)* are.
 */
import assert from 'node:assert/strict';

import { editorDefinition } from '../support/editor-definition';

describe("review: lh-state's Again every (s) in the dialog", function () {
  it('marks what is not 0 or a number of seconds from 1 to 86400, and takes what is', function () {
    const validate = editorDefinition('lh-state').defaults.repeat?.validate;
    assert.ok(validate, 'the field has a rule');
    for (const bad of ['-5', 'abc', '0.5', '86401', '1e9', 'NaN']) {
      assert.notEqual(validate.call({}, bad), true, `${bad} is taken`);
    }
    for (const good of ['', '0', '1', '60', '86400', ' 120 ']) assert.equal(validate.call({}, good), true, `${good} is refused`);
  });
});
