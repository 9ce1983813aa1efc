#include "envs/maze/mjcf.h"

#include <fmt/format.h>

#include <array>
#include <string>

namespace ringrl::envs::maze {
namespace {

// ---- ant (§10.3) ------------------------------------------------------------------------
constexpr double kAntArmature = 1.0;       // default joint armature
constexpr double kAntDamping = 1.0;        // default joint damping
constexpr double kGeomMargin = 0.01;       // default geom margin
constexpr double kAntDensity = 5.0;        // default geom density
constexpr double kTorsoRadius = 0.25;      // torso sphere
constexpr double kLegRadius = 0.08;        // every leg capsule
constexpr double kHipRangeDeg = 30.0;      // hip_k range +-30 degrees
constexpr double kFloorHalfSize = 160.0;   // floor plane half-size
constexpr double kFloorGridSpacing = 1.0;  // plane size[2]: visual grid spacing only

// Default geom contact parameters; solimp changes when the maze has a movable block (§10.1).
constexpr const char* kFriction = "1 0.5 0.5";
constexpr const char* kSolref = "0.02 1";
constexpr const char* kSolimp = "0.8 0.8 0.01";
constexpr const char* kBlockMazeSolimp = "0.995 0.995 0.01";

// ---- block (§10.1) ----------------------------------------------------------------------
constexpr double kFallingBlockShrink = 0.99;  // half-size factor f for falling blocks
constexpr double kFallingBlockMass = 0.001;   // kg
constexpr double kSlidingBlockMass = 0.0002;  // kg
constexpr double kBlockJointMargin = 0.01;

// ---- point (§10.5) ----------------------------------------------------------------------
constexpr double kPointRadius = 0.5;      // sphere radius, centred at z = radius
constexpr double kArrowHalfLength = 0.5;  // arrow box half-sizes (0.5, 0.1, 0.1)
constexpr double kArrowHalfWidth = 0.1;
constexpr double kArrowOffset = 0.6;  // arrow centre ahead of the sphere centre

// One ant leg (a row of the §10.3 table). Vectors are (x, y); all legs lie in z = 0.
struct Leg {
  const char* body;
  int index;                  // k in hip_k / ankle_k
  std::array<double, 2> aux;  // torso centre -> hip
  std::array<double, 2> thigh;
  std::array<double, 3> ankle_axis;
  std::array<double, 2> ankle_range_deg;
  std::array<double, 2> shin;
};

constexpr std::array<Leg, 4> kLegs = {{
    {"front_left_leg", 1, {0.2, 0.2}, {0.2, 0.2}, {-1, 1, 0}, {30, 70}, {0.4, 0.4}},
    {"front_right_leg", 2, {-0.2, 0.2}, {-0.2, 0.2}, {1, 1, 0}, {-70, -30}, {-0.4, 0.4}},
    {"back_leg", 3, {-0.2, -0.2}, {-0.2, -0.2}, {-1, 1, 0}, {-70, -30}, {-0.4, -0.4}},
    {"right_back_leg", 4, {0.2, -0.2}, {0.2, -0.2}, {1, 1, 0}, {30, 70}, {0.4, -0.4}},
}};

// Actuator order of the reference model (differs from the qpos joint order).
constexpr std::array<const char*, kAntNu> kActuatedJoints = {"hip_4", "ankle_4", "hip_1", "ankle_1",
                                                             "hip_2", "ankle_2", "hip_3", "ankle_3"};

// Shortest round-trip formatting of a number ("0.2", "-70", "0.0002").
std::string num(double v) { return fmt::format("{}", v); }

std::string capsule(const std::string& name, const std::array<double, 2>& to) {
  return fmt::format(R"(<geom name="{}" type="capsule" fromto="0 0 0 {} {} 0" size="{}"/>)", name, num(to[0]),
                     num(to[1]), num(kLegRadius));
}

std::string ant_leg(const Leg& leg) {
  const int k = leg.index;
  std::string s;
  s += fmt::format(R"(      <body name="{}" pos="0 0 0">)", leg.body) + "\n";
  s += "        " + capsule(fmt::format("aux_{}_geom", k), leg.aux) + "\n";
  s += fmt::format(R"(        <body name="aux_{}" pos="{} {} 0">)", k, num(leg.aux[0]), num(leg.aux[1])) + "\n";
  s += fmt::format(R"(          <joint name="hip_{}" type="hinge" pos="0 0 0" axis="0 0 1" range="{} {}"/>)", k,
                   num(-kHipRangeDeg), num(kHipRangeDeg)) +
       "\n";
  s += "          " + capsule(fmt::format("thigh_{}_geom", k), leg.thigh) + "\n";
  s += fmt::format(R"(          <body name="shin_{}" pos="{} {} 0">)", k, num(leg.thigh[0]), num(leg.thigh[1])) + "\n";
  s += fmt::format(R"(            <joint name="ankle_{}" type="hinge" pos="0 0 0" axis="{} {} {}" range="{} {}"/>)", k,
                   num(leg.ankle_axis[0]), num(leg.ankle_axis[1]), num(leg.ankle_axis[2]), num(leg.ankle_range_deg[0]),
                   num(leg.ankle_range_deg[1])) +
       "\n";
  s += "            " + capsule(fmt::format("shin_{}_geom", k), leg.shin) + "\n";
  s += "          </body>\n        </body>\n      </body>\n";
  return s;
}

// Static maze geometry: wall boxes and, for elevated mazes, one platform per non-chasm cell.
std::string maze_geoms(const Layout& layout) {
  const double half = 0.5 * layout.scale();
  const double half_h = 0.5 * layout.wall_height();
  const double z_off = layout.floor_height();
  std::string s;
  for (int i = 0; i < layout.rows(); ++i) {
    for (int j = 0; j < layout.cols(); ++j) {
      const Cell c = layout.at(i, j);
      const double x = layout.cell_x(j);
      const double y = layout.cell_y(i);
      if (layout.elevated() && c != Cell::kChasm) {
        s += fmt::format(R"(    <geom name="platform_{}_{}" type="box" pos="{} {} {}" size="{} {} {}" )"
                         R"(contype="1" conaffinity="1" rgba="0.6 0.6 0.6 1"/>)",
                         i, j, num(x), num(y), num(half_h), num(half), num(half), num(half_h)) +
             "\n";
      }
      if (c == Cell::kWall) {
        s += fmt::format(R"(    <geom name="wall_{}_{}" type="box" pos="{} {} {}" size="{} {} {}" )"
                         R"(contype="1" conaffinity="1" rgba="0.4 0.4 0.4 1"/>)",
                         i, j, num(x), num(y), num(z_off + half_h), num(half), num(half), num(half_h)) +
             "\n";
      }
    }
  }
  return s;
}

// The movable block body (§10.1), or "" when the layout has none.
std::string block_body(const Layout& layout) {
  if (!layout.has_block()) return "";
  const BlockRule& rule = layout.block_rule();
  const double z_off = layout.floor_height();
  const double half_h = 0.5 * layout.wall_height();
  const double f = rule.fall ? kFallingBlockShrink : 1.0;
  const double half = 0.5 * layout.scale() * f;
  const double mass = rule.fall ? kFallingBlockMass : kSlidingBlockMass;
  const char* xy_limited = rule.fall ? "true" : "false";
  const double s = layout.scale();
  std::string out;
  out += fmt::format(R"(    <body name="block" pos="{} {} {}">)", num(layout.block_x()), num(layout.block_y()),
                     num(z_off + half_h)) +
         "\n";
  const auto slide = [&](const char* name, const char* axis, const char* limited, double lo, double hi) {
    return fmt::format(R"(      <joint name="{}" type="slide" axis="{}" limited="{}" range="{} {}" )"
                       R"(armature="0" damping="0" margin="{}"/>)",
                       name, axis, limited, num(lo), num(hi), num(kBlockJointMargin)) +
           "\n";
  };
  if (rule.slide_x) out += slide("block_x", "1 0 0", xy_limited, -s, s);
  if (rule.slide_y) out += slide("block_y", "0 1 0", xy_limited, -s, s);
  if (rule.fall) out += slide("block_z", "0 0 1", "true", -z_off, 0.0);
  out += fmt::format(R"(      <geom name="block_geom" type="box" size="{} {} {}" mass="{}" )"
                     R"(contype="1" conaffinity="1" rgba="0.9 0.6 0.2 1"/>)",
                     num(half), num(half), num(half_h), num(mass)) +
         "\n";
  out += "    </body>\n";
  return out;
}

}  // namespace

std::string ant_maze_mjcf(const Layout& layout) {
  const double z_off = layout.floor_height();
  std::string s;
  s += fmt::format(R"(<mujoco model="ringrl_ant_{}">)", layout.name()) + "\n";
  s += R"(  <compiler inertiafromgeom="true" angle="degree" coordinate="local"/>)"
       "\n";
  s += fmt::format(R"(  <option timestep="{}" integrator="RK4"/>)", num(kAntTimestep)) + "\n";
  s += "  <default>\n";
  s += fmt::format(R"(    <joint limited="true" armature="{}" damping="{}"/>)", num(kAntArmature), num(kAntDamping)) +
       "\n";
  s += fmt::format(R"(    <geom condim="3" conaffinity="0" margin="{}" friction="{}" solref="{}" )"
                   R"(solimp="{}" density="{}" rgba="0.8 0.6 0.4 1"/>)",
                   num(kGeomMargin), kFriction, kSolref, layout.has_block() ? kBlockMazeSolimp : kSolimp,
                   num(kAntDensity)) +
       "\n";
  s += "  </default>\n";
  s += "  <worldbody>\n";
  s += fmt::format(R"(    <geom name="floor" type="plane" pos="0 0 0" size="{} {} {}" conaffinity="1" )"
                   R"(rgba="0.9 0.9 0.9 1"/>)",
                   num(kFloorHalfSize), num(kFloorHalfSize), num(kFloorGridSpacing)) +
       "\n";
  s += maze_geoms(layout);
  // The ant comes first in the tree, so its joints are qpos[0:15] / qvel[0:14].
  s += fmt::format(R"(    <body name="torso" pos="0 0 {}">)", num(kAntTorsoHeight + z_off)) + "\n";
  s += R"(      <joint name="root" type="free" pos="0 0 0" limited="false" armature="0" )"
       R"(damping="0"/>)"
       "\n";
  s += fmt::format(R"(      <geom name="torso_geom" type="sphere" pos="0 0 0" size="{}"/>)", num(kTorsoRadius)) + "\n";
  for (const Leg& leg : kLegs) s += ant_leg(leg);
  s += "    </body>\n";
  s += block_body(layout);
  s += "  </worldbody>\n";
  s += "  <actuator>\n";
  for (const char* joint : kActuatedJoints)
    s += fmt::format(R"(    <motor name="{}" joint="{}" gear="1" ctrllimited="true" ctrlrange="{} {}"/>)", joint, joint,
                     num(-kAntCtrlLimit), num(kAntCtrlLimit)) +
         "\n";
  s += "  </actuator>\n";
  s += "</mujoco>\n";
  return s;
}

std::string point_maze_mjcf(const Layout& layout) {
  std::string s;
  s += fmt::format(R"(<mujoco model="ringrl_point_{}">)", layout.name()) + "\n";
  s += R"(  <compiler inertiafromgeom="true" angle="degree" coordinate="local"/>)"
       "\n";
  s += fmt::format(R"(  <option timestep="{}" integrator="RK4"/>)", num(kPointTimestep)) + "\n";
  s += "  <default>\n";
  s += R"(    <joint limited="false" armature="0" damping="0"/>)"
       "\n";
  s += fmt::format(R"(    <geom condim="3" conaffinity="0" friction="{}" rgba="0.8 0.6 0.4 1"/>)", kFriction) + "\n";
  s += "  </default>\n";
  s += "  <worldbody>\n";
  s += fmt::format(R"(    <geom name="floor" type="plane" pos="0 0 0" size="{} {} {}" conaffinity="1" )"
                   R"(rgba="0.9 0.9 0.9 1"/>)",
                   num(kFloorHalfSize), num(kFloorHalfSize), num(kFloorGridSpacing)) +
       "\n";
  s += maze_geoms(layout);
  s += R"(    <body name="torso" pos="0 0 0">)"
       "\n";
  s += R"(      <joint name="ballx" type="slide" pos="0 0 0" axis="1 0 0"/>)"
       "\n";
  s += R"(      <joint name="bally" type="slide" pos="0 0 0" axis="0 1 0"/>)"
       "\n";
  s += R"(      <joint name="rot" type="hinge" pos="0 0 0" axis="0 0 1"/>)"
       "\n";
  s += fmt::format(R"(      <geom name="point_body" type="sphere" pos="0 0 {}" size="{}"/>)", num(kPointRadius),
                   num(kPointRadius)) +
       "\n";
  s += fmt::format(R"(      <geom name="point_arrow" type="box" pos="{} 0 {}" size="{} {} {}"/>)", num(kArrowOffset),
                   num(kPointRadius), num(kArrowHalfLength), num(kArrowHalfWidth), num(kArrowHalfWidth)) +
       "\n";
  s += "    </body>\n";
  s += "  </worldbody>\n";
  s += "</mujoco>\n";
  return s;
}

}  // namespace ringrl::envs::maze
