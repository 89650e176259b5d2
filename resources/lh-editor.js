// Editor helpers shared by the edit dialogs of @labwire/node-red-liquid-handler.
// Node-RED serves this file at resources/@labwire/node-red-liquid-handler/lh-editor.js. Every node's html
// includes it (any node type may be disabled on its own), so it may run more than once: the first one stays.
// The dialogs call it from oneditprepare and validators only; validators fall back to accepting when it is missing.
window.LhEditor =
  window.LhEditor ||
  (function () {
    'use strict';
    var INT32_MAX = 2147483647;
    var CONTEXT_TYPES = ['msg', 'flow', 'global', 'env'];

    function wholeNumber(v, min) {
      return /^\s*\d+\s*$/.test(String(v)) && Number(v) >= min && Number(v) <= INT32_MAX;
    }

    // The type a typedInput field has: the dialog's hidden type input when it has one, else the node's property.
    function fieldType(node, key, fallback) {
      return $('#node-input-' + key + 'Type').val() || node[key + 'Type'] || fallback;
    }

    function requestError(xhr) {
      return (xhr.responseJSON && xhr.responseJSON.error) || xhr.statusText || String(xhr.status);
    }

    function invalid(node, opt, errorKey, args) {
      return opt ? node._(errorKey, args) : false;
    }

    return {
      INT32_MAX: INT32_MAX,
      wholeNumber: wholeNumber,

      // #node-input-<key> as a typedInput of `types` (default: the default type then msg, flow, global, env).
      typedField: function (key, defaultType, types) {
        $('#node-input-' + key).typedInput({
          default: defaultType,
          typeField: $('#node-input-' + key + 'Type'),
          types: types || [defaultType].concat(CONTEXT_TYPES),
        });
      },

      // Validators, called as LhEditor.x(this, v, opt, ...) from a defaults entry's validate function.

      // A str-typed text: empty, a {{template}}, or matching `pattern`; other types are checked at run time.
      text: function (node, v, opt, key, pattern, errorKey) {
        if (!v || fieldType(node, key, 'str') !== 'str' || /\{\{/.test(v) || pattern.test(v)) {
          return true;
        }
        return invalid(node, opt, errorKey);
      },

      // A num-typed count: empty or a whole number from `min` to INT32_MAX.
      count: function (node, v, opt, key, min, errorKey) {
        if (
          v === '' ||
          v === undefined ||
          fieldType(node, key, 'num') !== 'num' ||
          (/^\d+$/.test(String(v)) && Number(v) >= min && Number(v) <= INT32_MAX)
        ) {
          return true;
        }
        return invalid(node, opt, errorKey);
      },

      // A num-typed integer, negative ones too.
      integer: function (node, v, opt, key, errorKey) {
        if (v === '' || fieldType(node, key, 'num') !== 'num' || /^-?\d+$/.test(String(v))) {
          return true;
        }
        return invalid(node, opt, errorKey);
      },

      // An instrument id: str holds digits or a {{template}}, num a whole number >= min,
      // msg/flow/global/env a valid property (Node-RED's own check); empty means the msg property.
      id: function (node, v, opt, key, min, errorKey, args) {
        if (v === undefined || v === null || v === '') {
          return true;
        }
        var input = $('#node-input-' + key + 'Type');
        var type = input.length ? input.val() : node[key + 'Type'];
        var ok;
        if (type === 'str') {
          ok = wholeNumber(v, min) || String(v).indexOf('{{') >= 0;
        } else if (type === 'num') {
          ok = wholeNumber(v, min);
        } else {
          var res = RED.validators.typedInput(key + 'Type').call(node, v, opt);
          if (res !== true) {
            return res;
          }
          ok = true;
        }
        return ok ? true : invalid(node, opt, errorKey, args);
      },

      // Shows each row (selector) when the select's value is "msg" or one of the row's values; now and on change.
      showRowsFor: function (select, rows) {
        function update() {
          var value = $(select).val();
          Object.keys(rows).forEach(function (row) {
            $(row).toggle(value === 'msg' || rows[row].indexOf(value) >= 0);
          });
        }
        $(select).on('change', update);
        update();
      },

      // Shows the rows (selector) while the checkbox is checked.
      showWhenChecked: function (checkbox, rows) {
        $(checkbox)
          .on('change', function () {
            $(rows).toggle($(this).is(':checked'));
          })
          .trigger('change');
      },

      // The message of a failed admin request.
      requestError: requestError,

      // Optional "pick from the instrument" button beside an id field: #<prefix>-pick lists, through the deployed
      // lh-server node, lh-server/<server>/<path> in #<prefix>-pick-list; choosing one sets #node-input-<field>
      // (type num). Texts: <prefix>.pick.noServer|loading|none|choose|failed, and what check() returns.
      // options: field, path() (after lh-server/<server>/), label(item), check() (optional: a pick.* key that
      // stops the request), loading (show pick.loading while waiting).
      picker: function (node, prefix, options) {
        var hint = $('#' + prefix + '-pick-hint');
        var pickList = $('#' + prefix + '-pick-list');
        var field = $('#node-input-' + options.field);
        function say(key, args) {
          hint.text(node._(prefix + '.pick.' + key, args)).show();
        }
        $('#' + prefix + '-pick').on('click', function () {
          var server = $('#node-input-server').val();
          pickList.hide();
          if (!server || server === '_ADD_') {
            say('noServer');
            return;
          }
          var stop = options.check && options.check();
          if (stop) {
            say(stop);
            return;
          }
          if (options.loading) {
            say('loading');
          }
          $.getJSON('lh-server/' + encodeURIComponent(server) + '/' + options.path())
            .done(function (items) {
              if (!items || items.length === 0) {
                say('none');
                return;
              }
              hint.hide();
              pickList.empty();
              $('<option>')
                .val('')
                .text(node._(prefix + '.pick.choose'))
                .appendTo(pickList);
              items.forEach(function (item) {
                $('<option>').val(String(item.id)).text(options.label(item)).appendTo(pickList);
              });
              pickList.show();
            })
            .fail(function (xhr) {
              say('failed', { error: requestError(xhr) });
            });
        });
        pickList.on('change', function () {
          var id = $(this).val();
          if (id === '') {
            return;
          }
          field.typedInput('type', 'num');
          field.typedInput('value', id);
        });
      },
    };
  })();
