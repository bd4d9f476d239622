import { QwcHotReloadElement, html, css } from 'qwc-hot-reload-element';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import '@vaadin/grid/vaadin-grid-sort-column.js';
import { columnBodyRenderer } from '@vaadin/grid/lit.js';
import 'qui-badge';

/**
 * qkcm's controllers, work queues, leader and informers, live (refreshed every 2 s and after each reload).
 * Data: the JSON-RPC method getState (io.qkcm.devui.runtime.QkcmJsonRpcService), the same JSON as /q/qkcm/state.
 */
export class QwcQkcmControllers extends QwcHotReloadElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        :host { display: flex; flex-direction: column; gap: 12px; padding: 10px; height: 100%; box-sizing: border-box; }
        .summary { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
        .kv { color: var(--lumo-secondary-text-color); }
        .kv b { color: var(--lumo-body-text-color); font-weight: 500; }
        h4 { margin: 6px 0 0 0; }
        vaadin-grid { font-size: var(--lumo-font-size-s); }
        .num { font-variant-numeric: tabular-nums; }
        .muted { color: var(--lumo-secondary-text-color); }
        .error { color: var(--lumo-error-text-color); }
    `;

    static properties = {
        _state: { state: true },
        _rows: { state: true },
    };

    connectedCallback() {
        super.connectedCallback();
        this.hotReload();
        this._timer = setInterval(() => this.hotReload(), 2000);
    }

    disconnectedCallback() {
        clearInterval(this._timer);
        super.disconnectedCallback();
    }

    hotReload() {
        this.jsonRpc.getState().then(r => {
            this._state = r.result;
            this._rows = this._controllerRows(r.result);
        });
    }

    _controllerRows(s) {
        const rows = (s.controllers || []).map(c => {
            const queues = c.queues || [];
            const sum = k => queues.reduce((a, q) => a + (q[k] || 0), 0);
            return {
                name: c.name,
                upstream: c.partial ? 'partial' : 'implemented',
                partial: c.partial || '',
                state: c.state,
                workers: c.workers ?? '',
                queues: queues.map(q => q.name).join(', '),
                depth: sum('depth'),
                adds: sum('adds'),
                retries: sum('retries'),
                longest: Math.max(0, ...queues.map(q => q.longestRunningProcessorSeconds || 0)),
            };
        });
        (s.notImplemented || []).forEach(n => rows.push({ name: n, upstream: 'not implemented', state: '', queues: '' }));
        (s.skipped || []).forEach(k => rows.push({ name: k.name, upstream: 'skipped', partial: k.reason, state: '', queues: '' }));
        return rows;
    }

    render() {
        const s = this._state;
        if (!s) {
            return html`<span class="muted">Loading qkcm's state…</span>`;
        }
        if (s.error) {
            return html`<span class="error">${s.error}</span>`;
        }
        if (!s.running) {
            return html`<span class="muted">The controller manager is not running (yet).</span>`;
        }
        const informers = s.informers || [];
        return html`
            <div class="summary">${this._leader(s.leaderElection || {})}
                <qui-badge level="${s.informersSynced ? 'success' : 'warning'}" small>
                    <span>informers ${s.informersSynced ? 'synced' : 'syncing'}: ${informers.filter(i => i.synced).length}/${informers.length}</span>
                </qui-badge>
            </div>
            <h4>Controllers</h4>
            <vaadin-grid .items="${this._rows}" theme="compact row-stripes wrap-cell-content" all-rows-visible>
                <vaadin-grid-sort-column path="name" header="Controller (upstream name)" width="20em" flex-grow="0"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="upstream" header="Upstream" width="10em" flex-grow="0"
                    ${columnBodyRenderer(r => this._upstream(r), [])}></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="state" header="State" width="7em" flex-grow="0"
                    ${columnBodyRenderer(r => this._controllerState(r.state), [])}></vaadin-grid-sort-column>
                <vaadin-grid-column path="workers" header="Workers" width="6em" flex-grow="0" text-align="end"></vaadin-grid-column>
                <vaadin-grid-sort-column path="depth" header="Queue depth" width="8em" flex-grow="0" text-align="end"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="retries" header="Retries (requeues)" width="9.5em" flex-grow="0" text-align="end"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="adds" header="Adds" width="6em" flex-grow="0" text-align="end"></vaadin-grid-sort-column>
                <vaadin-grid-column header="Longest work (s)" width="9em" flex-grow="0" text-align="end"
                    ${columnBodyRenderer(r => r.queues ? html`${(r.longest || 0).toFixed(1)}` : '', [])}></vaadin-grid-column>
                <vaadin-grid-column header="Work queues" flex-grow="1"
                    ${columnBodyRenderer(r => html`<span class="muted">${r.queues || r.partial || ''}</span>`, [])}></vaadin-grid-column>
            </vaadin-grid>
            <h4>Informers</h4>
            <vaadin-grid .items="${informers}" theme="compact row-stripes" all-rows-visible>
                <vaadin-grid-sort-column path="type" header="Type" auto-width flex-grow="2"></vaadin-grid-sort-column>
                <vaadin-grid-column header="Synced" auto-width
                    ${columnBodyRenderer(i => this._bool(i.synced, 'synced', 'not synced'), [])}></vaadin-grid-column>
                <vaadin-grid-column header="Watching" auto-width
                    ${columnBodyRenderer(i => this._bool(i.watching, 'watching', 'not watching'), [])}></vaadin-grid-column>
                <vaadin-grid-sort-column path="items" header="Cache size" auto-width text-align="end"></vaadin-grid-sort-column>
                <vaadin-grid-column path="resourceVersion" header="Last resourceVersion" auto-width></vaadin-grid-column>
            </vaadin-grid>`;
    }

    _leader(le) {
        if (!le.enabled) {
            return html`<qui-badge level="contrast" small><span>leader election off: this process runs the controllers</span></qui-badge>`;
        }
        return html`
            <qui-badge level="${le.leading ? 'success' : 'contrast'}" small>
                <span>${le.leading ? 'leader' : 'standby'}</span></qui-badge>
            <span class="kv">Lease <b>${le.lease}</b></span>
            <span class="kv">holder <b>${le.holder || '(none)'}</b></span>
            <span class="kv">this process <b>${le.identity}</b></span>
            <span class="kv">renewed <b>${le.renewTime || ''}</b></span>
            <span class="kv">transitions <b>${le.transitions ?? ''}</b></span>`;
    }

    _upstream(r) {
        const level = { 'implemented': 'success', 'partial': 'warning', 'not implemented': 'contrast', 'skipped': 'contrast' }[r.upstream];
        return html`<qui-badge level="${level}" small title="${r.partial || ''}"><span>${r.upstream}</span></qui-badge>`;
    }

    _controllerState(state) {
        if (!state) {
            return '';
        }
        const level = { running: 'success', failed: 'error', starting: 'warning', standby: 'contrast' }[state] || 'contrast';
        return html`<qui-badge level="${level}" small><span>${state}</span></qui-badge>`;
    }

    _bool(b, yes, no) {
        return html`<qui-badge level="${b ? 'success' : 'warning'}" small><span>${b ? yes : no}</span></qui-badge>`;
    }
}
customElements.define('qwc-qkcm-controllers', QwcQkcmControllers);
