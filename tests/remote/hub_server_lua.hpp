// The request handler the test servers' nginx runs in its access phase (ngx_http_lua_module), as Lua
// source the fixture writes beside nginx.conf. Per request: the block's delay, then its fault switch
// (429/503 once, a body cut short, a redirect loop), then the Hub's gating, then the route the fixture
// generated for the path (routes.lua: a redirect, a JSON answer, a tree page, or headers to add to the
// static file nginx then serves with Range and ETag); a path without a route gets the error the
// imitated server gives (the Hub's X-Error-Code answers, the registry's error list).
#pragma once

#include <string_view>

namespace akview::testing {

inline constexpr std::string_view kHubServerLua = R"lua(
local F = {}
local data = {}

function F.load(path)
  data = dofile(path)
end

-- Written by every new worker: the fixture waits for its generation after a start or a reload.
function F.ready()
  local f = io.open(data.ready_file, "w")
  if f then
    f:write(tostring(data.generation))
    f:close()
  end
end

-- The whole answer from here (ngx.exit(code) or ngx.redirect would make nginx's own page, which drops
-- ETag and Last-Modified: the Hub's redirects carry an ETag).
local function send(status, body, headers)
  ngx.status = status
  for k, v in pairs(headers or {}) do ngx.header[k] = v end
  ngx.header["Content-Length"] = #body
  ngx.send_headers()
  if #body > 0 then ngx.print(body) end
  return ngx.exit(ngx.HTTP_OK)
end

local function redirect(location, status)
  return send(status, "", {["Location"] = location})
end

local function json_quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

local function hub_error(status, code, message)
  return send(status, '{"error":' .. json_quote(message) .. '}',
              {["Content-Type"] = "application/json; charset=utf-8", ["X-Error-Code"] = code,
               ["X-Error-Message"] = message})
end

local function registry_error(status, code, message)
  return send(status, '{"errors":[{"code":"' .. code .. '","message":' .. json_quote(message) .. '}]}',
              {["Content-Type"] = "application/json; charset=utf-8"})
end

-- Answers one range (or the whole file) from the file nginx would serve, the way a fault asks:
-- "drop": headers, then half of the bytes, then the connection is cut; "long": `extra` bytes more
-- than asked, with a Content-Range that says so (a server that sends past the asked range).
local function serve_range(mode, extra)
  local f = io.open(ngx.var.request_filename, "rb")
  if not f then return send(404, "not found\n") end
  local size = f:seek("end")
  local first, last, status = 0, size - 1, 200
  local a, b = (ngx.var.http_range or ""):match("^bytes=(%d+)-(%d*)$")
  if a then
    a = tonumber(a)
    b = b ~= "" and math.min(tonumber(b), size - 1) or size - 1
    if mode == "long" then b = math.min(b + extra, size - 1) end
    if a <= b then
      first, last, status = a, b, 206
      ngx.header["Content-Range"] = string.format("bytes %d-%d/%d", a, b, size)
    end
  end
  ngx.status = status
  ngx.header["Content-Type"] = "application/octet-stream"
  ngx.header["Content-Length"] = last - first + 1
  f:seek("set", first)
  local count = last - first + 1
  if mode == "drop" then count = math.floor(count / 2) end
  local sent = 0
  while sent < count do
    local n = math.min(65536, count - sent)
    ngx.print(f:read(n))
    sent = sent + n
  end
  f:close()
  ngx.flush(true)
  if mode == "drop" then return ngx.exit(444) end
  return ngx.exit(ngx.HTTP_OK)
end

local function fault(f)
  if not f then return end
  if f.kind == "loop" then
    return redirect(data.blocks[ngx.ctx.block].base .. ngx.var.request_uri, 302)
  end
  if f.kind == "ranges_from" then
    local a = (ngx.var.http_range or ""):match("^bytes=(%d+)-")
    if not a or tonumber(a) < f.from then return end
    return send(f.code, '{"error":"fault switch: ranges from ' .. f.from .. '"}', {["Content-Type"] = "application/json"})
  end
  local n = ngx.shared.akview_fixture:incr("fault" .. f.id, 1, 0)
  if n > f.times then return end
  if f.kind == "status" then
    return send(f.code, '{"error":"fault switch: status ' .. f.code .. '"}',
                {["Content-Type"] = "application/json", ["Retry-After"] = tostring(f.retry_after)})
  elseif f.kind == "drop" or f.kind == "long" then
    return serve_range(f.kind, f.code)
  end
end

local function tree_page(route)
  local r = ngx.var.arg_recursive
  local recursive = r == "true" or r == "True" or r == "1"
  local pages = recursive and route.recursive or route.flat
  local cursor = tonumber(ngx.var.arg_cursor or "0")
  if not cursor or cursor < 0 or cursor >= #pages or cursor ~= math.floor(cursor) then
    return hub_error(400, "BadRequest", "Invalid cursor")
  end
  local headers = {["Content-Type"] = "application/json; charset=utf-8"}
  if cursor + 1 < #pages then
    headers["Link"] = "<" .. route.base .. "?" .. (recursive and "recursive=true&" or "") .. "cursor=" ..
                      (cursor + 1) .. '>; rel="next"'
  end
  return send(200, pages[cursor + 1], headers)
end

local function answer(route)
  for k, v in pairs(route.headers or {}) do ngx.header[k] = v end
  if route.kind == "redirect" then return redirect(route.location, route.status) end
  if route.kind == "body" then return send(route.status or 200, route.body) end
  if route.kind == "tree" then return tree_page(route) end
  -- "file": the location's static handler serves it, with the headers set above
end

local function repo_of(uri)
  local o, r = uri:match("^/api/models/([^/]+)/([^/]+)")
  if not o then o, r = uri:match("^/([^/]+)/([^/]+)/resolve/") end
  if not o then o, r = uri:match("^/([^/]+)/([^/]+)/raw/") end
  if o then return o .. "/" .. r end
end

local function hub(uri)
  local name = repo_of(uri)
  local repo = name and data.repos[name]
  if name and not repo then
    return hub_error(ngx.var.http_authorization and 404 or 401, "RepoNotFound",
                     "Repository Not Found for url: " .. data.blocks.hub.base .. uri .. ".")
  end
  if repo and repo.token then
    local auth = ngx.var.http_authorization
    if not auth then
      return hub_error(401, "GatedRepo", "Access to model " .. name .. " is restricted. You must have access to " ..
                       "it and be authenticated to access it. Please log in.")
    elseif auth ~= "Bearer " .. repo.token then
      return hub_error(403, "GatedRepo", "Access to model " .. name .. " is restricted and you are not in the " ..
                       "authorized list. Visit " .. data.blocks.hub.base .. "/" .. name .. " to ask for access.")
    end
  end
  local route = data.routes.hub[uri]
  if route then return answer(route) end
  if repo then
    local rev = uri:match("^/[^/]+/[^/]+/resolve/([^/]+)") or uri:match("^/[^/]+/[^/]+/raw/([^/]+)") or
                uri:match("^/api/models/[^/]+/[^/]+/%a+/([^/]+)")
    if rev and not repo.revs[rev] then
      return hub_error(404, "RevisionNotFound", "Invalid rev id: " .. rev)
    end
    return hub_error(404, "EntryNotFound", "Entry not found")
  end
  return hub_error(404, "NotFound", "Sorry, we can't find the page you are looking for.")
end

local function registry(uri)
  local route = data.routes.registry[uri]
  if route then return answer(route) end
  if uri == "/v2/" or uri == "/v2" then return send(200, "{}", {["Content-Type"] = "application/json"}) end
  if uri:match("/blobs/") then return registry_error(404, "BLOB_UNKNOWN", "blob unknown to registry") end
  return registry_error(404, "MANIFEST_UNKNOWN", "manifest unknown")
end

function F.access(block)
  local b = data.blocks[block]
  if b.delay > 0 then ngx.sleep(b.delay) end
  local uri = ngx.var.uri
  ngx.ctx.block = block
  fault(b.faults[uri])   -- this path's switch, then the whole block's (each returns when spent)
  fault(b.faults[""])
  if block == "hub" then return hub(uri) end
  if block == "registry" then return registry(uri) end
end

return F
)lua";

}   // namespace akview::testing
