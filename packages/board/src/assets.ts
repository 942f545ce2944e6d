/** The board's one stylesheet, served as a file of its own (the policy allows no inline style). */
export const STYLE = `:root{color-scheme:light;--line:#c8ccd2;--muted:#555b63;--bad:#a1001a;--good:#0b6b2e;--warn:#7a4d00;--focus:#1a5fb4}
*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1c1f23;background:#fff}
header{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;align-items:baseline;padding:.8rem 1.5rem;border-bottom:1px solid var(--line)}
header h1{font-size:1.1rem;margin:0}header nav a{margin-right:1rem}header .who{margin-left:auto;color:var(--muted)}
main{padding:1rem 1.5rem;max-width:80rem}a{color:#0b4f9c}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
form.filters{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:end;margin:.5rem 0 1rem}
form.filters label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:.3rem .5rem;border:1px solid #8a9099;border-radius:4px;background:#fff;color:#1c1f23}
button{cursor:pointer;background:#eef1f5}button.danger{background:var(--bad);color:#fff;border-color:var(--bad)}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}code,pre{font-family:ui-monospace,monospace;font-size:.85rem}
.value{word-break:break-all}pre.body{background:#f5f7fa;border:1px solid var(--line);padding:.8rem;overflow:auto;max-height:32rem;white-space:pre-wrap;word-break:break-all}
.outcome{font-weight:600}.outcome.bad{color:var(--bad)}.outcome.good{color:var(--good)}.outcome.warn{color:var(--warn)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1.2rem}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.notice{border:1px solid var(--line);border-left:4px solid var(--focus);padding:.6rem .8rem;margin:0 0 1rem}
.notice.error{border-left-color:var(--bad)}.actions{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
nav.actions a,p.actions a{padding:.3rem .7rem;border:1px solid #8a9099;border-radius:4px;text-decoration:none;background:#eef1f5;color:#1c1f23}
form.actions{align-items:center}button.primary{background:var(--focus);color:#fff;border-color:var(--focus)}
ol.timeline{padding-left:1.2rem}ol.timeline li{margin:.2rem 0}ol.timeline li.current{font-weight:600}
.pager{display:flex;gap:1rem;margin:1rem 0}.muted,.outcome.resolved{color:var(--muted)}
.chart{display:block;max-width:100%;height:auto;margin:.5rem 0}tr.new td{background:#eef6ff}
details.erase{margin:2rem 0 0}details.erase summary{cursor:pointer;color:var(--bad)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.customer{display:block}.rows{overflow:auto}
@media (max-width:40rem){header,main{padding:.6rem}
#deliveries,#deliveries tbody,#deliveries tr,#deliveries td{display:block}#deliveries thead{display:none}
#deliveries tr{border:1px solid var(--line);margin-bottom:.6rem;padding:.3rem}
#deliveries td:empty{display:none}#deliveries td{border:0;padding:.1rem 0 .1rem 6.5rem;position:relative;text-align:left}
#deliveries td::before{content:attr(data-label);position:absolute;left:0;color:var(--muted);font-size:.8rem}}`;

/**
 * The list page's one script: it opens the live stream the table names (`data-live`) and adds each
 * new delivery on top (with its account in the platform view's column), built with DOM calls and
 * `textContent` only (never markup), and reloads the chart once a minute. Without it the board
 * works the same, without live updates.
 */
export const SCRIPT = `(function(){'use strict';
var table=document.getElementById('deliveries');var url=table&&table.getAttribute('data-live');
if(!url||!window.EventSource)return;
var body=table.tBodies[0];var accounts=table.hasAttribute('data-accounts');var status=document.getElementById('live-status');var count=0;
function el(tag,text,cls){var e=document.createElement(tag);if(text)e.textContent=text;if(cls)e.className=cls;return e}
function put(p,c,gap){p.append(gap||'',c);return c}
function cell(tr,label,text,cls){var c=put(tr,el('td',text,cls));c.dataset.label=label;return c}
function orNone(tr,label,text,cls){var c=cell(tr,label,text,cls);if(!text)put(c,el('span','none','muted'));return c}
function link(text,href){var a=el('a',text);a.href=href;return a}
var source=new EventSource(url);
source.addEventListener('delivery',function(m){var r=JSON.parse(m.data);
var rows=body.rows;for(var i=0;i<rows.length;i++)if(rows[i].getAttribute('data-id')===r.id)return;
var tr=el('tr',null,'new');tr.dataset.id=r.id;
put(cell(tr,'Received'),link(r.receivedAt,r.href));
if(accounts)orNone(tr,'Account',r.account,'account');
orNone(tr,'Reference',r.reference,'value');
var order=cell(tr,'Order',null,'order');put(order,r.why?el('span',r.why,'muted'):el('span',r.order||'none',r.order?'value':'muted'));
if(r.customer)put(order,el('span',r.customer,'customer muted'));
cell(tr,'Amount',r.amount,'num');cell(tr,'Event',r.event);
var o=cell(tr,'Outcome');put(o,el('span',r.outcome,'outcome '+r.tone));
if(r.late)put(o,el('span',r.late,'outcome '+r.lateTone),' \\u2192 ');
if(r.resolved)put(put(o,el('span','resolved by ','muted'),' '),link(r.resolved,r.resolvedHref));
if(r.deadLetter)put(o,el('span',r.deadLetter,'outcome '+r.deadTone),' ');
cell(tr,'Status',String(r.status),'num');cell(tr,'Attempt',r.attempt,'num');cell(tr,'Signature',r.signature);cell(tr,'Took',r.took,'num');
body.insertBefore(tr,body.firstChild);table.hidden=false;var empty=document.getElementById('empty');if(empty)empty.remove();
count++;if(status)status.textContent=count+(count===1?' new delivery':' new deliveries')+' since the page loaded.'});
var chart=document.getElementById('chart');
if(chart){var src=chart.getAttribute('src');setInterval(function(){chart.setAttribute('src',src+(src.indexOf('?')<0?'?':'&')+'t='+Date.now())},60000)}
})();`;
