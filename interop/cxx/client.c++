// A C++ Cap'n Proto client for gadgetd, built with the stock C++ library
// (Debian's libcapnp-dev) against the committed schema. It proves that a
// non-Go client can log in, create a gadget and call its session, with the
// whole chain promise-pipelined into one round trip.
//
//   usage: client HOST:PORT TOKEN [GADGET_ID]
//
// Without GADGET_ID it creates a new counter gadget named "cxx"; with it, it
// opens that gadget instead. Either way it increments the counter by 1 in one
// pipelined chain and prints "value=N" and "gadget=ID". Then it checks that a
// wrong token fails with "invalid token" and prints "wrong token: <reason>".
// With GADGET_ID it then removes the gadget (Gadget.remove), checks that its
// info() fails with "unknown gadget id", and prints "removed=ID".
// Any failure prints "FAIL: ..." and exits non-zero.
//
// Built and run by interop/cxx_test.go; see interop/doc.go.

#include <capnp/ez-rpc.h>
#include <kj/debug.h>
#include <kj/exception.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "counter.capnp.h"
#include "workspace.capnp.h"

namespace {

int fail(const std::string& what) {
  std::cerr << "FAIL: " << what << std::endl;
  return 1;
}

int run(const char* addr, const char* token, const char* gadgetId) {
  capnp::EzRpcClient client(addr);
  auto& waitScope = client.getWaitScope();
  auto gateway = client.getMain<Gateway>();

  // One pipelined chain: nothing below waits until increment's answer.
  //   login(token).workspace.create("counter", "cxx").gadget   (new gadget)
  //   login(token).workspace.open(id).gadget                  (existing one)
  //     .open().session.castAs<Counter>().increment(by = 1)
  auto login = gateway.loginRequest();
  login.setToken(token);
  auto loginP = login.send();
  auto workspace = loginP.getWorkspace();

  kj::Maybe<capnp::RemotePromise<Workspace::CreateResults>> createP;
  Gadget::Client gadget = nullptr;
  if (gadgetId == nullptr) {
    auto create = workspace.createRequest();
    create.setBlueprint("counter");
    create.setName("cxx");
    auto p = create.send();
    gadget = p.getGadget();
    createP = kj::mv(p);
  } else {
    auto open = workspace.openRequest();
    open.setId(gadgetId);
    gadget = open.send().getGadget();
  }

  auto openP = gadget.openRequest().send();
  auto counter = openP.getSession().castAs<Counter>();

  auto inc = counter.incrementRequest();
  inc.setBy(1);
  auto result = inc.send().wait(waitScope);
  std::cout << "value=" << result.getValue() << std::endl;

  // info() checks that the gadget is what we asked for and gives its id.
  auto info = gadget.infoRequest().send().wait(waitScope).getInfo();
  if (std::string(info.getBlueprint().cStr()) != "counter") {
    return fail(std::string("gadget runs blueprint \"") + info.getBlueprint().cStr() +
                "\", want \"counter\"");
  }
  if (gadgetId != nullptr && std::string(info.getId().cStr()) != gadgetId) {
    return fail(std::string("opened gadget ") + gadgetId + " but info() says " +
                info.getId().cStr());
  }
  KJ_IF_MAYBE(p, createP) {
    auto created = p->wait(waitScope).getInfo();
    if (std::string(created.getId().cStr()) != info.getId().cStr()) {
      return fail(std::string("create() returned id ") + created.getId().cStr() +
                  " but the gadget's info() says " + info.getId().cStr());
    }
  }
  std::cout << "gadget=" << info.getId().cStr() << std::endl;

  // A wrong token must fail, with "invalid token", and a call pipelined on
  // the workspace it never returned must fail the same way.
  auto bad = gateway.loginRequest();
  bad.setToken(std::string(token) + "-wrong");
  auto badP = bad.send();
  auto listP = badP.getWorkspace().gadgetsRequest().send();
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() { listP.wait(waitScope); })) {
    auto desc = std::string(e->getDescription().cStr());
    if (desc.find("invalid token") == std::string::npos) {
      return fail("wrong token failed, but not with \"invalid token\": " + desc);
    }
    std::cout << "wrong token: " << desc << std::endl;
  } else {
    return fail("a call pipelined on login(wrong token) succeeded");
  }

  // The run that opened the gadget by id ends by removing it, with the
  // owner's Gadget capability; after that the capability names nothing.
  if (gadgetId != nullptr) {
    gadget.removeRequest().send().wait(waitScope);
    auto infoP = gadget.infoRequest().send();
    KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() { infoP.wait(waitScope); })) {
      auto desc = std::string(e->getDescription().cStr());
      if (desc.find("unknown gadget id") == std::string::npos) {
        return fail("info() after remove() failed, but not with \"unknown gadget id\": " + desc);
      }
    } else {
      return fail("info() on a removed gadget succeeded");
    }
    std::cout << "removed=" << gadgetId << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: " << argv[0] << " HOST:PORT TOKEN [GADGET_ID]" << std::endl;
    return 2;
  }
  const char* gadgetId = argc == 4 ? argv[3] : nullptr;
  int rc = 1;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() { rc = run(argv[1], argv[2], gadgetId); })) {
    return fail(std::string("exception: ") + e->getDescription().cStr());
  }
  return rc;
}
