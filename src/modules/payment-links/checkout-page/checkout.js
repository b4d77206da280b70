'use strict';
/*
 * The hosted checkout: reads the link's terms, lets the payer pick a network and an asset (and an
 * amount for an open link), starts a checkout session, then polls its status once a second and
 * moves through waiting -> detected -> confirmed -> paid (or expired) without a reload. The
 * session id is kept in the URL (?session=) so a reload resumes the same session; sessions are read
 * under this link's slug only, and a session that is not this link's is never shown. Only a 404
 * forgets a session: a read refused for a while (a rate limit, a restart, the network) is tried
 * again, as the answer says or backing off, and the payer is told so.
 */
(function () {
  var POLL_MS = 1000;
  var RETRY_MAX_MS = 30000;
  var REDIRECT_AFTER_MS = 2500;
  var STEPS = ['waiting', 'detected', 'confirmed', 'paid'];
  var slug = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
  var link = null;
  var session = null;
  var pollTimer = null;
  var clockTimer = null;
  var redirecting = false;
  /** Why a deposit was not counted, in the payer's words. */
  var NOT_COUNTED = {
    LATE: function () { return 'it arrived after the session ended'; },
    REPEAT: function () { return 'the session was already paid'; },
    WRONG_ASSET: function (s) { return 'this session takes ' + s.asset.symbol + ' only'; },
    WRONG_CHAIN: function (s) { return 'this session takes payment on ' + s.blockchain.name + ' only'; },
    AML_FLAGGED: function () { return 'it is held for review'; },
    OVER_LIMIT: function () { return 'the link had taken all its payments'; },
  };

  /** A session this link's page will not show: forgotten, and the link's own checkout offered instead. */
  function refuseSession() {
    var url = new URL(location.href);
    url.searchParams.delete('session');
    history.replaceState(null, '', url.toString());
    fail('This payment session is not one of this payment link.');
    renderLink();
  }

  function sessionPath(id) { return '/v1/checkout/links/' + encodeURIComponent(slug) + '/sessions/' + encodeURIComponent(id); }
  function ofThisLink(s) { return !!(s && s.link && s.link.slug === slug.toLowerCase()); }

  function $(id) { return document.getElementById(id); }
  function show(el, on) { el.hidden = !on; }

  function api(method, path, body) {
    return fetch(path, {
      method: method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'omit',
      cache: 'no-store',
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (!res.ok) {
          var err = new Error((json.error && json.error.message) || 'Request failed (' + res.status + ')');
          err.code = json.error && json.error.code;
          err.status = res.status;
          err.retryAfterMs = retryAfterMs(res);
          throw err;
        }
        return json.data;
      });
    }, function () {
      var err = new Error('The checkout could not be reached');
      err.code = 'NETWORK';
      throw err;
    });
  }

  /** When the answer says to ask again, in ms: its Retry-After, else a rate limit's reset (against the answer's own Date); 0 when it does not say. */
  function retryAfterMs(res) {
    var after = res.headers.get('Retry-After');
    if (after) return /^[0-9]+$/.test(after) ? Number(after) * 1000 : Math.max(0, Date.parse(after) - Date.now()) || 0;
    var reset = Number(res.headers.get('X-RateLimit-Reset'));
    var now = Date.parse(res.headers.get('Date') || '');
    return res.status === 429 && reset && now ? Math.max(0, reset * 1000 - now) : 0;
  }

  /** A refusal that passes: a rate limit, the server restarting or failing, the network. */
  function transient(e) { return e.code === 'NETWORK' || e.status === 429 || e.status >= 500; }

  function retryDelay(e, backoffMs) { return Math.min(RETRY_MAX_MS, Math.max(POLL_MS, e.retryAfterMs || backoffMs)); }

  /** GETs `path` until it answers: a transient refusal is tried again (as it says, else backing off up to 30 s) and shown; any other error rejects. */
  function patiently(path) {
    var backoff = POLL_MS;
    return new Promise(function (resolve, reject) {
      (function attempt() {
        api('GET', path).then(function (data) { retrying(null); resolve(data); }, function (e) {
          if (!transient(e)) { retrying(null); reject(e); return; }
          var wait = retryDelay(e, backoff);
          backoff = Math.min(RETRY_MAX_MS, backoff * 2);
          retrying(e, wait);
          setTimeout(attempt, wait);
        });
      })();
    });
  }

  /** Tells the payer a read is being tried again (nothing is lost: the session stays in the URL); null: no longer. */
  function retrying(e, waitMs) {
    var box = $('retrying');
    show(box, !!e);
    if (!e) return;
    var why = e.status === 429 ? 'Too many requests from your network' : e.code === 'NETWORK' ? 'The checkout could not be reached' : 'The checkout is briefly unavailable';
    box.textContent = why + '; retrying in ' + Math.ceil(waitMs / 1000) + ' s. Your payment session is kept.';
  }

  function fail(message) {
    var box = $('error');
    box.textContent = message;
    show(box, true);
  }

  function renderLink() {
    document.title = link.name + ' - Checkout';
    $('link-name').textContent = link.name;
    if (link.description) { $('link-description').textContent = link.description; show($('link-description'), true); }
    if (link.imgUrl && /^https:\/\//i.test(link.imgUrl)) { $('link-image').src = link.imgUrl; show($('link-image'), true); }
    if (link.amount) { $('link-amount').textContent = link.amount + ' ' + link.currency; show($('link-amount'), true); }
    if (!link.available) { fail(link.unavailableReason || 'This payment link is not available.'); return; }
    var network = $('network');
    link.options.forEach(function (o) {
      var opt = document.createElement('option');
      opt.value = o.blockchain.id;
      opt.textContent = o.blockchain.name;
      network.appendChild(opt);
    });
    network.addEventListener('change', fillAssets);
    fillAssets();
    show($('amount-field'), !link.amount);
    $('amount').required = !link.amount;
    show($('choose'), true);
    $('choose').addEventListener('submit', start);
  }

  function fillAssets() {
    var chosen = $('network').value;
    var asset = $('asset');
    asset.textContent = '';
    link.options.filter(function (o) { return o.blockchain.id === chosen; }).forEach(function (o) {
      o.assets.forEach(function (a) {
        var opt = document.createElement('option');
        opt.value = a.id;
        opt.textContent = a.symbol + ' (' + a.name + ')';
        asset.appendChild(opt);
      });
    });
  }

  function start(event) {
    event.preventDefault();
    show($('error'), false);
    var body = { blockchainId: $('network').value, assetId: $('asset').value };
    if (!link.amount) {
      var amount = $('amount').value.trim();
      if (!/^[0-9]+(\.[0-9]+)?$/.test(amount)) { fail('Enter an amount such as 25.50'); $('amount').focus(); return; }
      body.amount = amount;
    }
    $('start').disabled = true;
    api('POST', '/v1/checkout/links/' + encodeURIComponent(slug) + '/sessions', body).then(function (s) {
      var url = new URL(location.href);
      url.searchParams.set('session', s.id);
      history.replaceState(null, '', url.toString());
      begin(s);
    }, function (e) {
      $('start').disabled = false;
      fail(e.message);
    });
  }

  function begin(s) {
    if (!ofThisLink(s)) { refuseSession(); return; }
    session = s;
    show($('choose'), false);
    show($('pay'), true);
    $('pay-amount').textContent = s.amount;
    $('pay-asset').textContent = s.asset.symbol;
    $('pay-network').textContent = s.blockchain.name;
    $('hint-asset').textContent = s.asset.symbol;
    $('hint-network').textContent = s.blockchain.name;
    $('deposit-address').value = s.depositAddress;
    // EIP-681 on EVM, a Solana Pay transfer request on Solana: what the QR code encodes.
    $('payment-uri').value = s.paymentUri;
    $('open-wallet').href = s.paymentUri;
    $('qr').src = sessionPath(s.id) + '/qr.svg';
    $('qr').alt = 'QR code: pay ' + s.amount + ' ' + s.asset.symbol + ' to ' + s.depositAddress;
    $('copy').addEventListener('click', function () {
      var field = $('deposit-address');
      field.select();
      if (navigator.clipboard) navigator.clipboard.writeText(field.value).catch(function () {});
      $('copy').textContent = 'Copied';
    });
    render(s);
    clockTimer = setInterval(tickClock, 1000);
    tickClock();
    poll(POLL_MS);
  }

  function poll(delayMs) {
    pollTimer = setTimeout(function () {
      api('GET', sessionPath(session.id)).then(function (s) {
        if (!ofThisLink(s) || s.id !== session.id) return;
        session = s;
        render(s);
        if (!isFinal(s)) poll(POLL_MS);
      }, function (e) { poll(transient(e) ? retryDelay(e, POLL_MS) : POLL_MS); });
    }, delayMs);
  }

  function isFinal(s) {
    return s.status === 'PAID' || s.status === 'OVERPAID' || s.status === 'EXPIRED' || s.status === 'CANCELLED' || (s.status === 'UNDERPAID' && expired(s));
  }

  function expired(s) { return new Date(s.expiresAt).getTime() <= Date.now(); }

  function stateOf(s) {
    switch (s.status) {
      case 'DETECTED': return ['detected', 'Payment detected, waiting for confirmations'];
      case 'CONFIRMING': {
        var c = s.confirmations;
        return ['confirmed', 'Payment confirmed on chain, finalising' + (c ? ' (' + c.current + ' of ' + c.required + ' confirmations)' : '')];
      }
      case 'PAID': return ['paid', 'Paid. Thank you!'];
      case 'OVERPAID': return ['paid', 'Paid. You sent ' + s.amountOverpaid + ' ' + s.asset.symbol + ' more than asked; the merchant can refund it.'];
      case 'UNDERPAID': return expired(s)
        ? ['failed', 'Underpaid: ' + s.amountReceived + ' ' + s.asset.symbol + ' arrived before the session ended. Contact the merchant.']
        : ['underpaid', 'Underpaid: send ' + s.amountDue + ' ' + s.asset.symbol + ' more to the same address.'];
      case 'EXPIRED': return ['expired', 'This payment session has expired. Do not send funds to this address.'];
      case 'CANCELLED': return ['failed', 'This payment session was cancelled.'];
      default: return ['waiting', 'Waiting for your payment'];
    }
  }

  function render(s) {
    var st = stateOf(s);
    var status = $('status');
    if (status.dataset.state !== st[0] || status.textContent !== st[1]) {
      status.dataset.state = st[0];
      status.textContent = st[1];
    }
    var reached = STEPS.indexOf(st[0]);
    Array.prototype.forEach.call(document.querySelectorAll('.steps li'), function (li, i) {
      li.className = i < reached ? 'done' : i === reached ? 'current' : '';
      if (i === reached) li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
    });
    var finished = st[0] === 'paid' || st[0] === 'expired' || st[0] === 'failed';
    $('pay-title').textContent = finished ? 'Payment' : 'Send exactly';
    $('status-detail').textContent = s.amountReceived !== '0' ? (finished ? 'Received: ' : 'Received so far: ') + s.amountReceived + ' ' + s.asset.symbol : '';
    show($('payment-details'), !finished);
    if (s.message) { $('message').textContent = s.message; show($('message'), true); }
    var notCounted = (s.transfers || []).filter(function (t) { return t.kind !== 'PAYMENT' && t.status !== 'REVERTED' && NOT_COUNTED[t.kind]; });
    $('not-counted').textContent = notCounted.map(function (t) {
      return 'Received ' + t.amount + ' ' + t.asset.symbol + ' on ' + t.blockchain.name + ', not counted: ' + NOT_COUNTED[t.kind](s) + '. Contact the merchant for a refund.';
    }).join(' ');
    show($('not-counted'), notCounted.length > 0);
    $('main').setAttribute('aria-busy', 'false');
    if (st[0] === 'paid' && s.redirectUrl && !redirecting && /^https?:\/\//i.test(s.redirectUrl)) {
      redirecting = true;
      $('redirect-link').href = s.redirectUrl;
      show($('redirect'), true);
      setTimeout(function () { location.assign(s.redirectUrl); }, REDIRECT_AFTER_MS);
    }
    if (finished) clearInterval(clockTimer);
  }

  function tickClock() {
    if (!session) return;
    var left = Math.max(0, Math.floor((new Date(session.expiresAt).getTime() - Date.now()) / 1000));
    var m = Math.floor(left / 60);
    var sec = left % 60;
    var el = $('countdown');
    el.textContent = (m < 10 ? '0' : '') + m + ':' + (sec < 10 ? '0' : '') + sec;
    el.setAttribute('datetime', 'PT' + m + 'M' + sec + 'S');
  }

  function init() {
    var resume = new URL(location.href).searchParams.get('session');
    patiently('/v1/checkout/links/' + encodeURIComponent(slug)).then(function (l) {
      link = l;
      $('main').setAttribute('aria-busy', 'false');
      if (resume) {
        $('link-name').textContent = l.name;
        // Only a 404 says the session is not this link's; any other error keeps it (and its URL).
        return patiently(sessionPath(resume)).then(begin, function (e) {
          if (e.code === 'NOT_FOUND') refuseSession(); else fail(e.message);
        });
      }
      renderLink();
    }, function (e) {
      $('link-name').textContent = 'Checkout';
      $('main').setAttribute('aria-busy', 'false');
      fail(e.code === 'NOT_FOUND' ? 'This payment link does not exist.' : e.message);
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
